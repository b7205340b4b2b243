// heap/store/: the scratch memory HashShards copy their table into while they grow in place: one
// anonymous MAP_NORESERVE mapping per tree, made once at Create (raw syscalls; nothing is touched
// until a rehash uses it) and shared by the tree's shards under its own spin lock.
//
// Why not a fresh mmap per rehash: a host that unmaps a range with holes in it (munmap(p, 16K)
// after munmap(p + 4K, 4K)) would also unmap a scratch mapping the kernel had put in the hole.
// Lock order: a shard lock, then this lock; nobody takes a shard lock while holding this one.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class RehashScratch {
 public:
  RehashScratch() = default;
  RehashScratch(const RehashScratch&) = delete;
  RehashScratch& operator=(const RehashScratch&) = delete;

  // Reserves address space for `slots` slots. False if mmap fails. Like MappedFile, there is no
  // destructor: the recorder's trees live until the process exits (threads may still record
  // while static destructors run); owners that end earlier call Unmap.
  bool Map(uint64_t slots);
  void Unmap();

  // Locks the scratch and returns it, or null if `slots` exceeds it (or it is not mapped).
  format::HashSlot* Acquire(uint64_t slots);
  // Gives the pages of the first `slots` slots back to the kernel, except the first kKeptBytes,
  // and unlocks.
  void Release(uint64_t slots);
  static constexpr uint64_t kKeptBytes = uint64_t{4} << 20;

  // The reserved address range (0, 0 if not mapped): heapgraph's own memory, never a scan root.
  uint64_t begin() const { return reinterpret_cast<uint64_t>(slots_); }
  uint64_t end() const { return begin() + capacity_ * sizeof(format::HashSlot); }

 private:
  format::HashSlot* slots_ = nullptr;
  uint64_t capacity_ = 0;
  std::atomic<uint32_t> lock_{0};
};

}  // namespace heapgraph
