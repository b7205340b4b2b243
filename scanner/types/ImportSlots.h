// scanner/types/: the GOT slots that the dynamic linker binds to a named symbol, in every module
// loaded now (R_*_JUMP_SLOT and R_*_GLOB_DAT relocations of each module's dynamic section). A call
// through a PLT stub or `call *slot(%rip)` whose slot is in this set reaches that symbol, whether
// or not lazy binding has resolved it yet. May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>
#include <vector>

namespace heapgraph::scanner::types {

class ImportSlots {
 public:
  // Sorted slot addresses, empty if no loaded module imports `symbol`. Allocates; call it before
  // the world is stopped.
  static std::vector<uint64_t> Find(const char* symbol);
};

}  // namespace heapgraph::scanner::types
