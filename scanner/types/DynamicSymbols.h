// scanner/types/: queries on the dynamic sections of every module loaded now (dl_iterate_phdr),
// read in memory: no dlopen, no loader lock held beyond dl_iterate_phdr's, nothing loaded or
// initialised. May include heap/, roots/ and scanner/.
//   - FindDefinitions: every module's definition of a dynamic symbol (its .dynsym, looked up
//     through DT_GNU_HASH or DT_HASH), also in libraries loaded RTLD_LOCAL, which
//     dlsym(RTLD_DEFAULT) does not see, and duplicates that interposition hides.
//   - FindImportSlots: the GOT slots the dynamic linker binds to a symbol (R_*_JUMP_SLOT and
//     R_*_GLOB_DAT relocations). A call through a PLT stub or `call *slot(%rip)` whose slot is in
//     this set reaches that symbol, whether or not lazy binding has resolved it yet.
//   - FindFunctions: every module's defined functions whose dynamic name passes a filter, with
//     their addresses: the .dynsym walked whole, only in modules whose .dynstr holds a prefix.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace heapgraph::scanner::types {

namespace DynamicSymbols {

// Sorted, distinct addresses. Allocate: call them before the world is stopped.
std::vector<uint64_t> FindDefinitions(const char* symbol);
std::vector<uint64_t> FindImportSlots(const char* symbol);
// (address, name) of every defined function (STT_FUNC or STT_GNU_IFUNC) whose name starts with
// `prefix` and passes accept(name), in load order. A module whose string table does not hold
// `prefix` is passed over after one memmem.
std::vector<std::pair<uint64_t, std::string>> FindFunctions(const char* prefix,
                                                            bool (*accept)(const char* name));

}  // namespace DynamicSymbols

}  // namespace heapgraph::scanner::types
