// tests/scanner/types: ElfutilsLibrary: libelf and libdw are not loaded until first asked for,
// then every function of ElfutilsFunctions.inc is bound and works.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "scanner/types/ElfutilsLibrary.h"

namespace heapgraph::elfutils {
namespace {

bool Loaded(const char* soname) {
  void* library = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (library != nullptr) dlclose(library);
  return library != nullptr;
}

// Each test runs in its own process (ctest), so this one sees the process before any use.
TEST(ElfutilsLibraryTest, NeitherLibraryIsLoadedBeforeItIsAskedFor) {
  EXPECT_FALSE(Loaded("libelf.so.1"));
  EXPECT_FALSE(Loaded("libdw.so.1"));
  ASSERT_NE(Libelf(), nullptr);
  EXPECT_TRUE(Loaded("libelf.so.1"));
  EXPECT_FALSE(Loaded("libdw.so.1"));
  ASSERT_NE(Libdw(), nullptr);
  EXPECT_TRUE(Loaded("libdw.so.1"));
}

TEST(ElfutilsLibraryTest, EveryListedFunctionIsBoundOnceAndForAll) {
  const LibelfFunctions* elf = Libelf();
  const LibdwFunctions* dw = Libdw();
  ASSERT_NE(elf, nullptr);
  ASSERT_NE(dw, nullptr);
#define HEAPGRAPH_LIBELF(name) EXPECT_NE(elf->name, nullptr) << #name;
#define HEAPGRAPH_LIBDW(name) EXPECT_NE(dw->name, nullptr) << #name;
#include "scanner/types/ElfutilsFunctions.inc"
#undef HEAPGRAPH_LIBELF
#undef HEAPGRAPH_LIBDW
  EXPECT_EQ(elf, Libelf());
  EXPECT_EQ(dw, Libdw());
  EXPECT_EQ(dw, &Dw());
}

// Libelf() hands out an initialized libelf (elf_version was called): it reads this test's own
// executable at once.
TEST(ElfutilsLibraryTest, LibelfReadsAnElfFileWithoutFurtherSetUp) {
  const LibelfFunctions* lib = Libelf();
  ASSERT_NE(lib, nullptr);
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Elf* elf = lib->elf_begin(fd, ELF_C_READ, nullptr);
  ASSERT_NE(elf, nullptr);
  EXPECT_EQ(lib->elf_kind(elf), ELF_K_ELF);
  EXPECT_NE(lib->elf_nextscn(elf, nullptr), nullptr);
  lib->elf_end(elf);
  close(fd);
}

}  // namespace
}  // namespace heapgraph::elfutils
