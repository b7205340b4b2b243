// heap/runtime/: frees applied in batches. A recording thread's free of a small heap block is
// queued in its HeapgraphDeferredFrees (heap/plugin/ScanInterface.h, in the recorder's per-thread
// state) with the block's chunk header read and its tag's line fetched; the 16th free applies the
// batch: the tags are read and the tree slots fetched for all of them, then each block is taken out
// of the tree and given to glibc. The cache misses of 16 frees overlap instead of following one
// another (docs/performance.md, session 30). A queued block is still in glibc's heap and in the
// live-allocation tree, and stays invisible as a block of the program's because:
//  - a leak check drops the blocks of every registered queue (scanner/QueuedFrees) and the
//    checking thread applies its own queue first; a batch is applied from its last entry down,
//    each block taken out of the tree before the count goes below it, then freed, so a thread
//    stopped anywhere leaves each block either counted or out of the tree;
//  - a thread applies its queue when it exits (the recorder's pthread key destructor), at exit and
//    _exit, and before heapgraph_sync; a forked child applies the queues of the threads that do
//    not exist in it (ForEachRegistered);
//  - only chunks of at most kMaxChunk bytes not mapped by themselves are queued: a thread keeps at
//    most 16 × 4 KiB unfreed, while glibc's own per-thread cache keeps up to 7 chunks of each
//    size up to 1 KiB.
// A free from inside a hook (a signal handler), from a tool thread or while not recording is
// applied at once, as before. Never allocates; the registry is a fixed array of atomic slots.
// Include: heap/plugin/ScanInterface.h, heap/runtime/ (chunk, tag), heap/store/ (the tree).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heap/plugin/ScanInterface.h"
#include "heap/runtime/BlockTag.h"
#include "heap/runtime/GlibcChunk.h"
#include "heap/store/LiveAllocationTree.h"

namespace heapgraph {

class DeferredFrees {
 public:
  static constexpr uint32_t kCapacity = HEAPGRAPH_DEFERRED_FREES;
  static constexpr size_t kMaxChunk = 4096;
  static constexpr uint32_t kSlots = 256;  // threads with a queue at once; later ones free at once

  // True when `block`'s chunk may wait in a queue (reads its header); then its tag's line is
  // being fetched.
  static bool Queues(void* block) {
    const size_t header = glibc_chunk::Header(block);
    if ((header & 2) != 0 || (header & ~size_t{7}) > kMaxChunk) return false;
    __builtin_prefetch(block_tag::Where(block));
    return true;
  }

  // Appends `block` (entry first, count after); true when the queue is full.
  static bool Push(HeapgraphDeferredFrees& queue, void* block) {
    const uint32_t n = queue.count;
    queue.address[n] = reinterpret_cast<uintptr_t>(block);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    queue.count = n + 1;
    return n + 1 == kCapacity;
  }

  // Applies every queued free, from the last entry down: the block is taken out of `tree` (null:
  // the tree is not touched; `own_shard` the calling thread's) and its tag erased, then the count
  // drops below it, then glibc frees it.
  static void Apply(HeapgraphDeferredFrees& queue, LiveAllocationTree* tree, uint32_t own_shard);

  // Takes a registry slot for `queue`; false when all kSlots are taken.
  static bool Register(HeapgraphDeferredFrees* queue, uint32_t* slot);
  static void Unregister(uint32_t slot);
  // Calls `visit(queue, slot)` for every registered queue.
  template <typename Visit>
  static void ForEachRegistered(Visit&& visit);
  // The registry as a check reads it (HeapgraphRecorderView::deferred_queues).
  static HeapgraphDeferredFrees* const* Slots();

 private:
  static std::atomic<HeapgraphDeferredFrees*> slots_[kSlots];
};

template <typename Visit>
void DeferredFrees::ForEachRegistered(Visit&& visit) {
  for (uint32_t i = 0; i < kSlots; ++i) {
    HeapgraphDeferredFrees* queue = slots_[i].load(std::memory_order_acquire);
    if (queue != nullptr) visit(*queue, i);
  }
}

}  // namespace heapgraph
