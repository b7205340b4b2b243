// heap/plugin/: the writable memory of heapgraph's own two libraries, libheapgraph.so and the
// scan plugin (libheapgraph_scan.so) once it is loaded: their .data and .bss hold the recorder's
// and the checker's state (trees, caches, tables, the previous check's leftovers) and never a
// pointer the program keeps, so a leak check reads none of it as a root
// (HeapgraphRecorderView::own_data). At 800 KiB for libheapgraph.so alone, that was most of what a
// small program's check read. The one table of program addresses among them, the registered root
// regions, is given to the check apart (HeapgraphRecorderView::root_regions) and stays a root.
// Found without the loader's locks (LoadedObject), no allocation: callable with the recorder's
// locks held.
#pragma once

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace OwnLibraryData {

inline constexpr int kMaxRanges = 8;

// The writable segments of libheapgraph.so and, when loaded, of the plugin: a table of up to
// kMaxRanges ranges in this library's memory, refreshed by each call; *count receives how many.
const HeapgraphMemoryRange* Ranges(int* count);

}  // namespace OwnLibraryData

}  // namespace heapgraph
