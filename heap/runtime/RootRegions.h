// heap/runtime/: the root regions a program registered (LeakSanitizer's
// __lsan_register_root_region / __lsan_unregister_root_region): a fixed table of kSlots ranges in
// libheapgraph.so, which leak checks read through HeapgraphRecorderView::root_regions
// (heap/plugin/ScanInterface.h) and scan as roots. Register and Unregister take a spinlock (rare
// calls); a reader never locks: slots are written so that a stopped writer leaves them free or
// whole. No malloc; a bad call is one line on stderr, never fatal (LeakSanitizer dies on an
// unregister that matches nothing; heapgraph says so and goes on).
#pragma once

#include <cstddef>

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace RootRegions {

inline constexpr int kSlots = 256;

// Adds [begin, begin + size); false (after one line on stderr) for size 0 or a full table.
// The same range may be registered more than once (each needs its own Unregister).
bool Register(const void* begin, size_t size);
// Removes one registration of exactly (begin, size); false, after one line, if there is none.
bool Unregister(const void* begin, size_t size);
// The table, kSlots slots.
const HeapgraphRootRegion* Slots();

}  // namespace RootRegions

}  // namespace heapgraph
