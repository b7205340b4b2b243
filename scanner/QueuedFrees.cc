#include "scanner/QueuedFrees.h"

#include <algorithm>

#include "roots/RawSyscall.h"

namespace heapgraph::scanner::QueuedFrees {

using roots::RawSyscall::ReadOwnMemory;

MmapVector<uint64_t> Read(const HeapgraphRecorderView& view) {
  MmapVector<uint64_t> queued;
  if (view.deferred_queues == nullptr || view.deferred_queue_slots <= 0) return queued;
  const auto slots = static_cast<size_t>(view.deferred_queue_slots);
  MmapVector<uint64_t> queues(slots);
  if (!ReadOwnMemory(reinterpret_cast<uint64_t>(view.deferred_queues), queues.data(),
                     slots * sizeof(uint64_t))) {
    return queued;
  }
  for (uint64_t where : queues) {
    HeapgraphDeferredFrees queue;
    if (where == 0 || !ReadOwnMemory(where, &queue, sizeof(queue))) continue;
    const uint32_t count = std::min<uint32_t>(queue.count, HEAPGRAPH_DEFERRED_FREES);
    queued.insert(queued.end(), queue.address, queue.address + count);
  }
  std::sort(queued.begin(), queued.end());
  return queued;
}

size_t Drop(std::span<const uint64_t> queued, MmapVector<LeakedBlock>* blocks,
            MmapVector<BlockRange>* ranges) {
  if (queued.empty()) return 0;
  size_t kept = 0;
  for (size_t i = 0; i < blocks->size(); ++i) {
    if (std::binary_search(queued.begin(), queued.end(), (*blocks)[i].address)) continue;
    (*blocks)[kept] = (*blocks)[i];
    (*ranges)[kept] = (*ranges)[i];
    ++kept;
  }
  const size_t dropped = blocks->size() - kept;
  blocks->resize(kept);
  ranges->resize(kept);
  return dropped;
}

}  // namespace heapgraph::scanner::QueuedFrees
