// scanner/types/: see CapstoneLoader.h. May include heap/, roots/ and scanner/.
#include "scanner/types/CapstoneLoader.h"

#include <capstone/capstone.h>

#include "heap/platform/SharedLibrary.h"

#define HEAPGRAPH_CAPSTONE_TEXT(x) #x
#define HEAPGRAPH_CAPSTONE_SONAME(major) "libcapstone.so." HEAPGRAPH_CAPSTONE_TEXT(major)

namespace {

struct Functions {
  decltype(&cs_open) open = nullptr;
  decltype(&cs_close) close = nullptr;
  decltype(&cs_option) option = nullptr;
  decltype(&cs_disasm) disasm = nullptr;
  decltype(&cs_free) free = nullptr;
  decltype(&cs_malloc) malloc = nullptr;
  decltype(&cs_disasm_iter) disasm_iter = nullptr;
  decltype(&cs_insn_group) insn_group = nullptr;
  decltype(&cs_regs_access) regs_access = nullptr;
};

Functions Load() {
  Functions f;
  const heapgraph::SharedLibrary library(HEAPGRAPH_CAPSTONE_SONAME(CS_API_MAJOR));
  bool all = library.Bind("cs_close", &f.close) && library.Bind("cs_option", &f.option) &&
             library.Bind("cs_disasm", &f.disasm) && library.Bind("cs_free", &f.free) &&
             library.Bind("cs_malloc", &f.malloc) &&
             library.Bind("cs_disasm_iter", &f.disasm_iter) &&
             library.Bind("cs_insn_group", &f.insn_group) &&
             library.Bind("cs_regs_access", &f.regs_access);
  if (all) library.Bind("cs_open", &f.open);  // null open: Capstone unavailable
  return f;
}

const Functions& Get() {
  static const Functions functions = Load();
  return functions;
}

}  // namespace

namespace heapgraph::scanner::types {

bool CapstoneLoaded() {
  return Get().open != nullptr;
}

}  // namespace heapgraph::scanner::types

cs_err cs_open(cs_arch arch, cs_mode mode, csh* handle) {
  return heapgraph::scanner::types::CapstoneLoaded() ? Get().open(arch, mode, handle) : CS_ERR_MEM;
}

cs_err cs_close(csh* handle) {
  return Get().close(handle);
}

cs_err cs_option(csh handle, cs_opt_type type, size_t value) {
  return Get().option(handle, type, value);
}

size_t cs_disasm(csh handle, const uint8_t* code, size_t code_size, uint64_t address, size_t count,
                 cs_insn** insn) {
  return Get().disasm(handle, code, code_size, address, count, insn);
}

void cs_free(cs_insn* insn, size_t count) {
  Get().free(insn, count);
}

cs_insn* cs_malloc(csh handle) {
  return Get().malloc(handle);
}

bool cs_disasm_iter(csh handle, const uint8_t** code, size_t* size, uint64_t* address,
                    cs_insn* insn) {
  return Get().disasm_iter(handle, code, size, address, insn);
}

bool cs_insn_group(csh handle, const cs_insn* insn, unsigned int group_id) {
  return Get().insn_group(handle, insn, group_id);
}

cs_err cs_regs_access(csh handle, const cs_insn* insn, cs_regs regs_read, uint8_t* regs_read_count,
                      cs_regs regs_write, uint8_t* regs_write_count) {
  return Get().regs_access(handle, insn, regs_read, regs_read_count, regs_write, regs_write_count);
}
