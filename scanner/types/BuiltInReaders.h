// scanner/types/: the readers a leak scan uses, in identification order. May include heap/,
// roots/ and scanner/.
#pragma once

#include "scanner/types/ReaderSet.h"

namespace heapgraph::scanner::types {

// Adds every built-in reader to `set` (BuiltInReaders.cc lists them; add new readers there).
void RegisterBuiltInReaders(ReaderSet& set);
// The same readers with `layouts` for field names; null: names only, no DWARF is read (the
// memory-pressure watcher's type refresh needs the types, not their fields).
void RegisterBuiltInReaders(ReaderSet& set, DebugLayouts* layouts);

}  // namespace heapgraph::scanner::types
