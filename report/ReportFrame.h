// report/: one symbolized frame of a recorded stack, as leak and FOOM reports show it.
#pragma once

#include <cstdint>
#include <string>

namespace heapgraph::report {

// One source-level frame of a stack. A return address whose code was inlined yields several
// frames with the same address, module and offset: the inlined callees first (inlined = true),
// the containing function last (inlined = false).
struct ReportFrame {
  uint64_t address = 0;     // runtime return address
  std::string module;       // basename of module_path; empty when no module covers `address`
  std::string module_path;  // as recorded
  std::string build_id;     // lowercase hex; empty when the module has none
  uint64_t offset = 0;      // address - load bias (the ELF vaddr); 0 when module is empty
  std::string function;     // demangled; empty when not symbolized
  std::string file;         // empty exactly when line is 0
  int line = 0;
  bool inlined = false;

  bool operator==(const ReportFrame&) const = default;
};

}  // namespace heapgraph::report
