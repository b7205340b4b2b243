#include "heap/runtime/StackCachePool.h"

#include <sys/mman.h>

#include "heap/runtime/UnwinderMappings.h"

namespace heapgraph {

// Two threads may reserve at once: one region wins, the other is unmapped.
StackCachePool::Entry* StackCachePool::Reserve() {
  Entry* region = region_.load(std::memory_order_acquire);
  if (region != nullptr) return region;
  void* mapped = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  if (!region_.compare_exchange_strong(region, static_cast<Entry*>(mapped),
                                       std::memory_order_acq_rel)) {
    munmap(mapped, kRegionBytes);
    return region;
  }
  auto begin = reinterpret_cast<uint64_t>(mapped);
  if (registry_ != nullptr) (void)registry_->Add(begin, begin + kRegionBytes);
  return static_cast<Entry*>(mapped);
}

StackCachePool::Entry* StackCachePool::Take() {
  if (Reserve() == nullptr) return nullptr;
  uint64_t top = returned_.load(std::memory_order_acquire);
  while (static_cast<uint32_t>(top) != 0) {
    const uint32_t slot = static_cast<uint32_t>(top) - 1;
    const uint64_t below = next_[slot].load(std::memory_order_relaxed);
    const uint64_t pops = (top >> 32) + 1;
    if (returned_.compare_exchange_weak(top, (pops << 32) | below, std::memory_order_acq_rel)) {
      return Cache(slot);
    }
  }
  const uint32_t slot = next_unused_.fetch_add(1, std::memory_order_relaxed);
  if (slot >= kSlots) {
    next_unused_.store(kSlots, std::memory_order_relaxed);  // no wrap after 2^32 refusals
    return nullptr;
  }
  return Cache(slot);
}

void StackCachePool::Give(Entry* cache) {
  Entry* region = region_.load(std::memory_order_acquire);
  if (cache == nullptr || region == nullptr || cache < region ||
      cache >= region + kSlots * kEntries) {
    return;
  }
  const auto slot = static_cast<uint32_t>((cache - region) / kEntries);
  uint64_t top = returned_.load(std::memory_order_relaxed);
  do {
    next_[slot].store(static_cast<uint32_t>(top), std::memory_order_relaxed);
  } while (!returned_.compare_exchange_weak(top, (top & ~0xffffffffull) | (slot + 1),
                                            std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace heapgraph
