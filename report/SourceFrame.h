// report/: one source-level frame of a machine address, as the Symbolizer finds it and the
// SymbolCache keeps it. May include nothing of the project.
#pragma once

#include <string>

namespace heapgraph::report {

// `file` is the DWARF path joined with the compilation directory (so usually absolute). It is
// empty exactly when `line` is 0: position unknown, e.g. a stripped library named through
// .dynsym, or compiler-generated code. `inlined`: an inlined callee, the call being inside the
// next frame.
struct SourceFrame {
  std::string function;
  std::string file;
  int line = 0;
  bool inlined = false;

  bool operator==(const SourceFrame&) const = default;
};

}  // namespace heapgraph::report
