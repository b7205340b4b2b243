#include "heap/runtime/UnwinderMappings.h"

namespace heapgraph {

bool UnwinderMappings::Claim(uint32_t i) {
  uint64_t expected = kFree;
  return slots_[i].begin.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire);
}

void UnwinderMappings::Widen(uint32_t slot, uint64_t begin, uint64_t end) {
  Group& g = groups_[slot / kGroup];
  uint64_t not_low = g.not_low.load(std::memory_order_relaxed);
  while (begin < ~not_low &&
         !g.not_low.compare_exchange_weak(not_low, ~begin, std::memory_order_release)) {
  }
  uint64_t high = g.high.load(std::memory_order_relaxed);
  while (end > high && !g.high.compare_exchange_weak(high, end, std::memory_order_release)) {
  }
}

bool UnwinderMappings::Add(uint64_t begin, uint64_t end) {
  if (begin <= kClaimed || end <= begin) return false;
  // A free slot among those used so far (threads exit and free theirs), else a new one.
  uint32_t used = used_.load(std::memory_order_acquire);
  uint32_t start = used == 0 ? 0 : hint_.load(std::memory_order_relaxed) % used;
  int32_t found = -1;
  for (uint32_t n = 0; n < used && found < 0 && freed_.load(std::memory_order_relaxed) > 0; ++n) {
    uint32_t i = (start + n) % used;
    if (Claim(i)) {
      found = static_cast<int32_t>(i);
      freed_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  while (found < 0) {
    uint32_t i = used_.load(std::memory_order_acquire);
    if (i >= kCapacity) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (used_.compare_exchange_weak(i, i + 1, std::memory_order_acq_rel) && Claim(i)) {
      found = static_cast<int32_t>(i);
    }
  }
  Widen(static_cast<uint32_t>(found), begin, end);  // before publishing: Forget reads it first
  Slot& slot = slots_[found];
  slot.end.store(end, std::memory_order_relaxed);
  slot.begin.store(begin, std::memory_order_release);  // publishes end too
  hint_.store(static_cast<uint32_t>(found) + 1, std::memory_order_relaxed);
  return true;
}

void UnwinderMappings::Forget(uint64_t begin, uint64_t end) {
  if (end <= begin) return;
  uint32_t used = used_.load(std::memory_order_acquire);
  if (used > kCapacity) used = kCapacity;
  for (uint32_t first = 0; first < used; first += kGroup) {
    const Group& g = groups_[first / kGroup];
    if (g.low() >= end || g.high.load(std::memory_order_acquire) <= begin) {
      continue;
    }
    uint32_t last = first + kGroup < used ? first + kGroup : used;
    for (uint32_t i = first; i < last; ++i) {
      uint64_t b = slots_[i].begin.load(std::memory_order_acquire);
      if (b <= kClaimed || b >= end) continue;
      if (slots_[i].end.load(std::memory_order_relaxed) <= begin) continue;
      // Another thread may have forgotten (and reused) the slot meanwhile: nothing to do then.
      if (slots_[i].begin.compare_exchange_strong(b, kFree, std::memory_order_release)) {
        freed_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
}

}  // namespace heapgraph
