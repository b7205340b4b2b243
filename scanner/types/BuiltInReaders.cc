#include "scanner/types/BuiltInReaders.h"

#include "scanner/types/BlockReader.h"
#include "scanner/types/CxxVtableReader.h"
#include "scanner/types/GnuObjcReader.h"
#include "scanner/types/SharedPtrReader.h"
#include "scanner/types/StdFunctionReader.h"

namespace heapgraph::scanner::types {

// Order matters: the first reader that identifies a block wins. Readers whose objects carry a
// model-specific header (Blocks, ObjC isa) come before the C++ ones; the shared_ptr reader comes
// before the generic vtable reader because control blocks are polymorphic objects too. The
// DWARF layouts are shared by the C++ readers and live as long as the set.
void RegisterBuiltInReaders(ReaderSet& set) {
  RegisterBuiltInReaders(set, set.debug_layouts());
}

void RegisterBuiltInReaders(ReaderSet& set, DebugLayouts* layouts) {
  set.Add(std::make_unique<BlockReader>());
  set.Add(std::make_unique<GnuObjcReader>());
  set.Add(std::make_unique<SharedPtrReader>(layouts));
  set.Add(std::make_unique<CxxVtableReader>(layouts));
  set.Add(std::make_unique<StdFunctionReader>(layouts));
}

}  // namespace heapgraph::scanner::types
