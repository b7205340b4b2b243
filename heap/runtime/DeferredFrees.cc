#include "heap/runtime/DeferredFrees.h"

#include "heap/runtime/GlibcAllocator.h"

namespace heapgraph {

constinit std::atomic<HeapgraphDeferredFrees*> DeferredFrees::slots_[kSlots] = {};

static_assert(sizeof(std::atomic<HeapgraphDeferredFrees*>) == sizeof(HeapgraphDeferredFrees*) &&
                  std::atomic<HeapgraphDeferredFrees*>::is_always_lock_free,
              "a check reads the registry's slots as plain pointers");

void DeferredFrees::Apply(HeapgraphDeferredFrees& queue, LiveAllocationTree* tree,
                          uint32_t own_shard) {
  const uint32_t n = queue.count < kCapacity ? queue.count : kCapacity;
  LiveAllocationTree::Slot slots[kCapacity];
  if (tree != nullptr) {
    // The tags' lines were fetched when the blocks were queued; the slots' are fetched now.
    for (uint32_t i = 0; i < n; ++i) {
      block_tag::Read(reinterpret_cast<void*>(queue.address[i]), &slots[i].shard, &slots[i].index);
      tree->Prefetch(slots[i]);
    }
  }
  for (uint32_t i = n; i-- > 0;) {
    void* block = reinterpret_cast<void*>(queue.address[i]);
    if (tree != nullptr && tree->Remove(slots[i], queue.address[i], nullptr, own_shard)) {
      block_tag::Clear(block);
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    queue.count = i;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    __libc_free(block);
  }
}

bool DeferredFrees::Register(HeapgraphDeferredFrees* queue, uint32_t* slot) {
  for (uint32_t i = 0; i < kSlots; ++i) {
    HeapgraphDeferredFrees* expected = nullptr;
    if (slots_[i].compare_exchange_strong(expected, queue, std::memory_order_acq_rel)) {
      *slot = i;
      return true;
    }
  }
  return false;
}

void DeferredFrees::Unregister(uint32_t slot) {
  if (slot < kSlots) slots_[slot].store(nullptr, std::memory_order_release);
}

HeapgraphDeferredFrees* const* DeferredFrees::Slots() {
  return reinterpret_cast<HeapgraphDeferredFrees* const*>(slots_);
}

}  // namespace heapgraph
