// heap/runtime/: the anonymous mappings that heapgraph's stack capture made for itself: the rule
// walk's table (UnwindRuleCache, registered at the recorder's start; until session 31 also
// libunwind's per-thread caches, ≈ 1 GB on 4,000 threads) and the threads' stack caches
// (StackCachePool, registered when the first thread takes one). They hold unwind data, stack
// hashes and stack ids, never a pointer of the program's, so a leak scan leaves them out of its
// roots.
// A fixed-capacity, lock-free registry: no malloc, no lock, so it is safe in the mmap hooks, in a
// forked child (no lock can be left held) and when read by a snapshot of the stopped process.
// Invariant: a published range is still mapped by the unwinder. Every munmap, MAP_FIXED mmap or
// mremap through heapgraph's hooks forgets the ranges it touches *before* the syscall, so an
// address the program may receive again is never published. Full registry: Add fails, the
// mapping stays a root (as without the registry).
#pragma once

#include <atomic>
#include <cstdint>

namespace heapgraph {

class UnwinderMappings {
 public:
  // Two ranges are registered now (the rule table, the stack caches' region); until session 36
  // the registry had room for 32,768 (libunwind's per-thread caches, gone since session 31), 532 KB
  // of which a process's first Add wrote three pages (a slot, its group, the counters).
  static constexpr uint32_t kCapacity = 128;

  // Publishes [begin, end). False if the range is empty or the registry is full.
  bool Add(uint64_t begin, uint64_t end);
  // Forgets every published range that overlaps [begin, end) (the whole range, even if only part
  // of it is unmapped: forgetting is always safe, the memory is then scanned).
  void Forget(uint64_t begin, uint64_t end);
  // Calls f(begin, end) for each published range. In a snapshot of a stopped process a slot
  // caught between claim and publish reads as unpublished.
  template <typename F>
  void ForEach(F&& f) const {
    uint32_t used = used_.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < used && i < kCapacity; ++i) {
      uint64_t begin = slots_[i].begin.load(std::memory_order_acquire);
      if (begin <= kClaimed) continue;
      uint64_t end = slots_[i].end.load(std::memory_order_relaxed);
      if (end > begin) f(begin, end);
    }
  }
  // Adds refused because the registry was full (their mappings are scanned).
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint64_t kFree = 0;
  static constexpr uint64_t kClaimed = 1;  // being written: end is not valid yet
  // begin == kFree: free; kClaimed: being written; otherwise published, with end set before.
  struct Slot {
    std::atomic<uint64_t> begin{kFree};
    std::atomic<uint64_t> end{0};
  };

  // Bounds of every range ever published in a group of kGroup consecutive slots (they only grow):
  // Forget skips a group its range does not meet. Slots are claimed in time order and the kernel
  // hands out nearby addresses at nearby times, so most groups are skipped.
  static constexpr uint32_t kGroup = 64;
  // low is kept complemented, so that an empty group is all zero and the registry, zero
  // throughout, lies in .bss (a 532 KB object with one nonzero word went to .data, file-backed).
  struct Group {
    std::atomic<uint64_t> not_low{0};  // ~low: 0 is low = UINT64_MAX (nothing published)
    std::atomic<uint64_t> high{0};
    uint64_t low() const { return ~not_low.load(std::memory_order_acquire); }
  };

  bool Claim(uint32_t i);
  void Widen(uint32_t slot, uint64_t begin, uint64_t end);

  // The counters, the groups, then the slots: what an Add writes lies together.
  std::atomic<uint32_t> used_{0};  // slots [0, used_) have ever been claimed
  std::atomic<uint32_t> hint_{0};  // where Add starts looking for a free slot
  // Slots below used_ that Forget freed and no Add has claimed again (a hint: it may lag a racing
  // Forget or Add by one, which costs a reuse or a scan, never a lost range). 0: Add takes a new
  // slot without scanning the used ones (filling the registry is linear, not quadratic).
  std::atomic<int32_t> freed_{0};
  std::atomic<uint64_t> refused_{0};
  Group groups_[kCapacity / kGroup];
  Slot slots_[kCapacity];
};

}  // namespace heapgraph
