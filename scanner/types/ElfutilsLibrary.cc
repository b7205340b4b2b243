#include "scanner/types/ElfutilsLibrary.h"

#include <optional>
#include <type_traits>

#include "heap/platform/SharedLibrary.h"
#include "heap/platform/WarningLine.h"

// The SONAMEs CMake found (heapgraph_soname); these, which elfutils has kept since its first
// releases, where the file is built outside the scanner target (the fuzzers).
#ifndef HEAPGRAPH_LIBDW_SONAME
#define HEAPGRAPH_LIBDW_SONAME "libdw.so.1"
#endif
#ifndef HEAPGRAPH_LIBELF_SONAME
#define HEAPGRAPH_LIBELF_SONAME "libelf.so.1"
#endif

namespace heapgraph::elfutils {
namespace {

// The table of `soname` with every function listed for it bound; nullopt (one line on stderr)
// when the library or one of its functions is missing.
template <typename Table>
std::optional<Table> Load(const char* soname) {
  Table table;
  const SharedLibrary library(soname);
  bool all = library.loaded();
  if constexpr (std::is_same_v<Table, LibelfFunctions>) {
#define HEAPGRAPH_LIBELF(name) all = all && library.Bind(#name, &table.name);
#define HEAPGRAPH_LIBDW(name)
#include "scanner/types/ElfutilsFunctions.inc"
#undef HEAPGRAPH_LIBELF
#undef HEAPGRAPH_LIBDW
  } else {
#define HEAPGRAPH_LIBELF(name)
#define HEAPGRAPH_LIBDW(name) all = all && library.Bind(#name, &table.name);
#include "scanner/types/ElfutilsFunctions.inc"
#undef HEAPGRAPH_LIBELF
#undef HEAPGRAPH_LIBDW
  }
  if (!all) {
    WarningLine::Print("cannot load an elfutils library", soname,
                       "; frames stay unnamed and no debug information is read");
    return std::nullopt;
  }
  if constexpr (std::is_same_v<Table, LibelfFunctions>) table.elf_version(EV_CURRENT);
  return table;
}

}  // namespace

const LibelfFunctions* Libelf() {
  static const std::optional<LibelfFunctions> table =
      Load<LibelfFunctions>(HEAPGRAPH_LIBELF_SONAME);
  return table ? &*table : nullptr;
}

const LibdwFunctions* Libdw() {
  static const std::optional<LibdwFunctions> table = Load<LibdwFunctions>(HEAPGRAPH_LIBDW_SONAME);
  return table ? &*table : nullptr;
}

}  // namespace heapgraph::elfutils
