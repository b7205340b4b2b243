// scanner/: the blocks the program freed that the recorder has not applied yet (its per-thread
// queues, heap/runtime/DeferredFrees.h, listed in HeapgraphRecorderView::deferred_queues). They
// are still in the live-allocation tree and in glibc's heap, but no longer the program's: a scan
// reads the queues in the stopped world (a snapshot process reads its copy of it) and drops those
// blocks from its blocks before anything is indexed or marked, as if their frees had been applied:
// never leaked, never reached, their contents never read. The queues are read with
// process_vm_readv, so a slot naming memory that is gone is skipped, never a fault; a count above
// the capacity is taken as the capacity. No host malloc (MmapAllocator).
#pragma once

#include <cstdint>
#include <span>

#include "heap/plugin/ScanInterface.h"
#include "scanner/BlockIndex.h"
#include "scanner/MmapAllocator.h"
#include "scanner/ScanResult.h"

namespace heapgraph::scanner {

namespace QueuedFrees {

// Every queued address, sorted.
MmapVector<uint64_t> Read(const HeapgraphRecorderView& view);

// Removes the blocks that start at a `queued` address from `blocks` and `ranges` (both in address
// order, blocks[i] being ranges[i]'s); returns how many went.
size_t Drop(std::span<const uint64_t> queued, MmapVector<LeakedBlock>* blocks,
            MmapVector<BlockRange>* ranges);

}  // namespace QueuedFrees

}  // namespace heapgraph::scanner
