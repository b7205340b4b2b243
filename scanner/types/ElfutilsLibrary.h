// scanner/types/: elfutils' libelf and libdw, loaded when first needed instead of linked (the
// pattern of heap/platform/SharedLibrary). libdw is loaded by the first address symbolized from a
// module file (a leak's frame, or the symbol warm-up that runs beside a long marking, when the
// user's symbol cache lacks it), libelf by a .symtab that names a std::function handler
// (StdFunctionReader): a small program's clean check loads neither.
// Linked, libdw and libelf brought libz and libbz2 with them into every checked process:
// ≈ 0.25 ms of a small check's ≈ 2.3 ms (issue 14). ElfutilsFunctions.inc lists every function
// heapgraph calls; each is called through these tables, so a function left out of the list does
// not link.
// Contract: Libelf() / Libdw() load their library once per process (thread-safe; a failure is
// reported once on stderr and remembered) and return its table with every function bound (libelf
// initialized: elf_version(EV_CURRENT) has been called), or null when it cannot be loaded: the
// caller then reads nothing (no symbols, no layouts). Not for hooks (dlopen allocates). May
// include heap/.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

namespace heapgraph::elfutils {

struct LibelfFunctions {
#define HEAPGRAPH_LIBELF(name) decltype(&::name) name = nullptr;
#define HEAPGRAPH_LIBDW(name)
#include "scanner/types/ElfutilsFunctions.inc"
#undef HEAPGRAPH_LIBELF
#undef HEAPGRAPH_LIBDW
};

struct LibdwFunctions {
#define HEAPGRAPH_LIBELF(name)
#define HEAPGRAPH_LIBDW(name) decltype(&::name) name = nullptr;
#include "scanner/types/ElfutilsFunctions.inc"
#undef HEAPGRAPH_LIBELF
#undef HEAPGRAPH_LIBDW
};

// libelf's functions, or null when libelf cannot be loaded.
const LibelfFunctions* Libelf();
// libdw's functions, or null when libdw cannot be loaded.
const LibdwFunctions* Libdw();
// libdw's functions, for code that runs only once Libdw() returned them (it holds a Dwarf or Dwfl
// handle made through them).
inline const LibdwFunctions& Dw() {
  return *Libdw();
}

}  // namespace heapgraph::elfutils
