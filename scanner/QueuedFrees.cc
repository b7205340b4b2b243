#include "scanner/QueuedFrees.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

namespace heapgraph::scanner::QueuedFrees {
namespace {

// `bytes` at `address` of this process into `out`; false when any of it is unreadable.
bool ReadOwn(uint64_t address, void* out, size_t bytes) {
  iovec local = {out, bytes};
  iovec remote = {reinterpret_cast<void*>(address), bytes};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
}

}  // namespace

MmapVector<uint64_t> Read(const HeapgraphRecorderView& view) {
  MmapVector<uint64_t> queued;
  if (view.deferred_queues == nullptr || view.deferred_queue_slots <= 0) return queued;
  const auto slots = static_cast<size_t>(view.deferred_queue_slots);
  MmapVector<uint64_t> queues(slots);
  if (!ReadOwn(reinterpret_cast<uint64_t>(view.deferred_queues), queues.data(),
               slots * sizeof(uint64_t))) {
    return queued;
  }
  for (uint64_t where : queues) {
    HeapgraphDeferredFrees queue;
    if (where == 0 || !ReadOwn(where, &queue, sizeof(queue))) continue;
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
