// heap/runtime/: in sampling mode, lets a free skip the tree when its block cannot have been
// sampled: a counting filter of 2^16 atomic counters indexed by a hash of the block address.
// Invariant: a counter is >= the number of blocks in heap.tree that hash to it (Add before the
// insert, Remove after the removal), so MayContain() false proves the block is not in the tree;
// true may be a collision and the tree decides. The free that asks happens after the malloc that
// added (the program's own synchronization), so a relaxed load sees the increment. Static storage
// (256 KiB of bss, touched only when sampling); no allocation, no locks.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class SampledAddressFilter {
 public:
  static constexpr uint32_t kBits = 16;

  void Add(uint64_t address) { counters_[Index(address)].fetch_add(1, std::memory_order_relaxed); }
  void Remove(uint64_t address) {
    counters_[Index(address)].fetch_sub(1, std::memory_order_relaxed);
  }
  bool MayContain(uint64_t address) const {
    return counters_[Index(address)].load(std::memory_order_relaxed) != 0;
  }

 private:
  static uint32_t Index(uint64_t address) {
    return static_cast<uint32_t>(((address >> 4) * format::kHashMultiplier) >> (64 - kBits));
  }

  std::atomic<uint32_t> counters_[1u << kBits] = {};
};

}  // namespace heapgraph
