// tests/scanner/types: CapstoneLoader: libcapstone is not loaded until the first cs_open, then
// the forwarders disassemble as Capstone does.
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "scanner/types/CapstoneLoader.h"

namespace heapgraph::scanner::types {
namespace {

bool LibraryLoaded() {
  void* library = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_NOLOAD);
  if (library != nullptr) dlclose(library);
  return library != nullptr;
}

// Each test runs in its own process (ctest), so this one sees the process before any cs_open.
TEST(CapstoneLoaderTest, NothingIsLoadedBeforeTheFirstOpen) {
  EXPECT_FALSE(LibraryLoaded());
  csh handle = 0;
  ASSERT_EQ(CS_ERR_OK, cs_open(CS_ARCH_X86, CS_MODE_64, &handle));
  EXPECT_TRUE(LibraryLoaded());
  EXPECT_TRUE(CapstoneLoaded());
  cs_close(&handle);
}

TEST(CapstoneLoaderTest, ForwardersDisassembleAndReportGroups) {
  csh handle = 0;
  ASSERT_EQ(CS_ERR_OK, cs_open(CS_ARCH_X86, CS_MODE_64, &handle));
  ASSERT_EQ(CS_ERR_OK, cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON));
  const uint8_t code[] = {0x48, 0x89, 0xf8, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3};  // mov, call, ret
  cs_insn* insn = nullptr;
  size_t count = cs_disasm(handle, code, sizeof(code), 0x1000, 0, &insn);
  ASSERT_EQ(3u, count);
  EXPECT_EQ(std::string("mov"), insn[0].mnemonic);
  EXPECT_TRUE(cs_insn_group(handle, &insn[1], CS_GRP_CALL));
  EXPECT_EQ(std::string("ret"), insn[2].mnemonic);
  cs_regs read{}, written{};
  uint8_t read_count = 0, written_count = 0;
  EXPECT_EQ(CS_ERR_OK,
            cs_regs_access(handle, &insn[0], read, &read_count, written, &written_count));
  EXPECT_EQ(1u, written_count);  // rax
  cs_free(insn, count);

  cs_insn* one = cs_malloc(handle);
  ASSERT_NE(nullptr, one);
  const uint8_t* at = code;
  size_t size = sizeof(code);
  uint64_t address = 0x1000;
  ASSERT_TRUE(cs_disasm_iter(handle, &at, &size, &address, one));
  EXPECT_EQ(0x1003u, address);
  cs_free(one, 1);
  EXPECT_EQ(CS_ERR_OK, cs_close(&handle));
}

}  // namespace
}  // namespace heapgraph::scanner::types
