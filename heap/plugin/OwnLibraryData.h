// heap/plugin/: the writable memory of libheapgraph.so: its .data and .bss hold the recorder's
// state (trees, caches, tables) and never a pointer to a block the program allocated, so a leak
// check reads none of it as a root (HeapgraphRecorderView::own_data). At ≈ 800 KiB that was most
// of what a small program's check read. The one table of program addresses there, the registered
// root regions, is given to the check apart (HeapgraphRecorderView::root_regions) and stays a root.
// The scan plugin's own data stays a root: linked into a program (a test build), its static
// libstdc++'s exception pool is a block the recorder saw allocated, held only from there.
// Found without the loader's locks (LoadedObject), no allocation: callable with the recorder's
// locks held.
#pragma once

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace OwnLibraryData {

inline constexpr int kMaxRanges = 4;

// The writable segments of libheapgraph.so: a table of up to kMaxRanges ranges in this library's
// memory, refreshed by each call; *count receives how many.
const HeapgraphMemoryRange* Ranges(int* count);

}  // namespace OwnLibraryData

}  // namespace heapgraph
