// scanner/types/: pointer members of C++ classes from DWARF (elfutils libdw), for the C++
// readers' descriptions: each member's name and byte offset, and whether it owns what it points
// to. std::shared_ptr: the control-block word owns (strong, kSharedOwner), the element word does
// not; std::weak_ptr owns nothing; std::unique_ptr owns; a std::function's functor word is
// conservative here (graph/StrongReferences makes it strong when it points at a heap functor);
// raw pointers stay conservative (a raw pointer may or may not own). Members of class type are
// expanded ("_impl._buffer"), base classes inlined, up to kMaxDepth levels. Classes are found by
// qualified name in the modules' own .debug_info (loaded lazily, one index per module); a class
// without DWARF has no fields. Checking process only. May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scanner/types/ModuleSegments.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

class DebugLayouts {
 public:
  static constexpr int kMaxDepth = 4;

  DebugLayouts();
  ~DebugLayouts();
  DebugLayouts(const DebugLayouts&) = delete;
  DebugLayouts& operator=(const DebugLayouts&) = delete;

  // The pointer fields of class `qualified_name` ("ns::ChatSession"), offsets plus `base`,
  // sorted by offset; empty when no loaded module has its definition.
  std::vector<FieldDescription> Fields(const std::string& qualified_name, uint32_t base,
                                       const ModuleSegments& modules);
  // The fields of the functor type of std::function manager `manager` (runtime address of a
  // _Function_handler<..., F>::_M_manager), from its _Functor template parameter. Lambda
  // captures keep their variable names. Empty when the manager's module has no DWARF.
  std::vector<FieldDescription> FunctorFields(uint64_t manager, const ModuleSegments& modules);

 private:
  struct Module;
  Module* Open(uint32_t module, const ModuleSegments& modules);

  std::map<uint32_t, std::unique_ptr<Module>> modules_;
};

}  // namespace heapgraph::scanner::types
