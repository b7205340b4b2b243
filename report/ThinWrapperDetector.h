// report/: tells whether a function is a thin allocation wrapper (seed 000: Caller1 must be "as
// meaningful as possible, not the previous address of the allocation function"). The function
// containing an address is found in the ELF file's .symtab/.dynsym (libelf) and disassembled with
// Capstone. A thin wrapper is small (at most kMaxInstructions), straight-line (no backward
// branch: no loop) and calls out at most kMaxCalls times (the allocator, and perhaps an
// out-of-memory handler behind a conditional branch) - e.g. xmalloc, a pool's Alloc() that
// forwards to malloc. A second call on the straight path (malloc then memset) is work of the
// function's own: not a wrapper.
// Results are cached per function. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heapgraph::report {

class ThinWrapperDetector {
 public:
  static constexpr size_t kMaxInstructions = 48;
  static constexpr size_t kMaxCalls = 2;

  // `elf_vaddr`: an address inside the function (for a return address, the call before it).
  // False when the function or its code cannot be found.
  bool IsThinWrapper(const std::string& elf_path, uint64_t elf_vaddr);
  // The decision for raw x86-64 code at `address` (the function's bytes).
  static bool IsThinCode(const std::vector<uint8_t>& code, uint64_t address);

 private:
  struct Function {
    uint64_t start = 0;
    std::vector<uint8_t> code;
  };
  static std::optional<Function> FindFunction(const std::string& elf_path, uint64_t elf_vaddr);

  std::map<std::pair<std::string, uint64_t>, bool> by_address_;
};

}  // namespace heapgraph::report
