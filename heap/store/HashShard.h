// heap/store/: one shard of the live-allocation tree: an open-addressing hash table of 24-byte
// slots (format::HashSlot) with linear probing in Robin Hood order and backward-shift deletion (no
// tombstones), stored in the shard's region of a MappedFile. Robin Hood order (invariant): along a
// run of nonempty slots, a block's distance from its home grows by at most one a slot, i.e. the
// blocks of a run lie in the cyclic order of their homes; so a lookup of an absent address stops at
// the first block nearer its home than the probe, and a deletion's shift stops at the first block
// at its home. Readers do not depend on the order (they read every slot). The table starts at
// kInitialCapacity slots and grows in place (capacity x kGrowNum / kGrowDen) when an insert would
// push the load past MaxLoadNum / kMaxLoadDen (10/16 below kDenseCapacity slots, else 13/16);
// growth reserves disk first and stops at the region's max_capacity,
// after which new blocks are refused and counted as `dropped`. No operation allocates from the heap
// or throws. Callers hold the shard lock around every operation except Lock/Unlock.
#pragma once

#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/RehashScratch.h"

namespace heapgraph {

class HashShard {
 public:
  static constexpr uint64_t kInitialCapacity = 64;
  // A grown table's load stays in [13/16 x 15/16, 13/16] = [0.76, 0.81] from kDenseCapacity slots
  // on: 24-byte slots cost at most 31.5 bytes a block (the metadata target is 32 at 1M blocks,
  // with page rounding). At load 0.79 (a simulation of random churn, session 13): a lookup probes
  // ~3.3 slots, an insertion then moves ~8.7 blocks forward and a deletion ~9.1 back (plain linear
  // probing: an insertion probed ~11.8 slots, a deletion walked ~13.8 to the end of the run).
  // Smaller tables (up to ~5,100 blocks a shard, ~330,000 in 64 shards) stay at most 10/16 full,
  // 38-41 bytes a block: churn with 10,000 live blocks a thread cost ~30 ns less a malloc+free
  // pair (1 and 2 threads, docs/performance.md "Session 15"); 8/16 gained nothing more. A table
  // at its max_capacity fills to 13/16 whatever its size (it cannot grow). Capacities are the same
  // series either way (kInitialCapacity x (16/15)^n, rounded down).
  static constexpr uint64_t kMaxLoadDen = 16;
  static constexpr uint64_t kSparseLoadNum = 10, kDenseLoadNum = 13;
  static constexpr uint64_t kDenseCapacity = 8192;
  static constexpr uint64_t kGrowNum = 16, kGrowDen = 15;
  static constexpr uint64_t MaxLoadNum(uint64_t capacity, uint64_t max_capacity) {
    return capacity < kDenseCapacity && capacity < max_capacity ? kSparseLoadNum : kDenseLoadNum;
  }

  // The region holds `max_capacity` slots starting at `file_offset` in `file`; `scratch` must
  // hold at least max_capacity slots (it may be shared with other shards).
  void Attach(format::HashShardHeader* header, format::HashSlot* slots, uint64_t max_capacity,
              MappedFile* file, uint64_t file_offset, RehashScratch* scratch);
  // Formats an empty shard without a table (the first insert creates it).
  void Reset();

  void Lock();
  void Unlock();

  // Inserts, or overwrites the block at the same address. False (and `dropped` counted) if the
  // shard is at its maximum load and cannot grow, or for address 0.
  bool Upsert(const BlockRecord& block);
  // Removes the block starting at `address`; false if there is none.
  bool Remove(uint64_t address, BlockRecord* removed);
  bool Find(uint64_t address, BlockRecord* found) const;
  // Asks the CPU to fetch, for writing, the lines an Upsert or Remove of `address` touches first
  // (the header with the lock, the home slot). No lock needed: a stale capacity only prefetches a
  // wrong line.
  void Prefetch(uint64_t address) const {
    PrefetchForWrite(header_);
    uint64_t capacity = header_->capacity;
    if (capacity != 0) PrefetchForWrite(&slots_[Home(address, capacity)]);
  }
  // Sets the ignored flag of the block starting at `address`; false if there is none.
  bool MarkIgnored(uint64_t address);

  // Visits every live block once, in slot order (not address order).
  template <typename Visit>
  void ForEach(Visit&& visit) const;

  uint64_t live_count() const { return header_->live_count; }
  uint64_t live_bytes() const { return header_->live_bytes; }
  uint64_t capacity() const { return header_->capacity; }
  uint64_t max_capacity() const { return max_capacity_; }
  const format::HashShardHeader* header() const { return header_; }
  const format::HashSlot* slots() const { return slots_; }

  // The home slot of `address` in a table of `capacity` slots: multiply-shift of address >> 4,
  // reduced to [0, capacity) by the high half of a 128-bit product (no power of two needed).
  static uint64_t Home(uint64_t address, uint64_t capacity) {
    uint64_t h = (address >> 4) * format::kHashMultiplier;
    return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * capacity) >> 64);
  }
  static BlockRecord ToRecord(const format::HashSlot& slot);

 private:
  // prefetchw: GCC drops __builtin_prefetch(p, 1) without -mprfchw; CPUs without the instruction
  // execute it as a NOP.
  static void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p, 1, 3);
#endif
  }
  uint64_t Next(uint64_t i) const {
    return i + 1 == header_->capacity ? 0 : i + 1;
  }
  uint64_t Prev(uint64_t i) const {
    return (i == 0 ? header_->capacity : i) - 1;
  }
  // How far slot `index` lies past the home of `address` (cyclically).
  static uint64_t Distance(uint64_t address, uint64_t index, uint64_t capacity) {
    const uint64_t home = Home(address, capacity);
    return (index >= home ? 0 : capacity) + index - home;
  }
  // True with the slot of `address`; otherwise false with the slot where it belongs (empty, or
  // the first slot whose block is nearer its home than `address` would be).
  bool Lookup(uint64_t address, uint64_t* index) const;
  // Lookup's result for a present block, without the order test; for an absent one, false with
  // the empty slot ending the run (not where it belongs).
  bool LookupLikelyPresent(uint64_t address, uint64_t* index) const;
  void Put(uint64_t index, const BlockRecord& block);
  void Overwrite(uint64_t index, const BlockRecord& block);
  void InsertAt(uint64_t at, const BlockRecord& block);
  void SetWriting(uint32_t value);
  void BackwardShift(uint64_t hole);
  bool Grow();
  // True when `blocks` would load the table past its maximum (MaxLoadNum).
  bool OverMaxLoad(uint64_t blocks) const {
    const uint64_t capacity = header_->capacity;
    return blocks * kMaxLoadDen > capacity * MaxLoadNum(capacity, max_capacity_);
  }
  bool ReserveFor(uint64_t capacity);
  void Rehash(const format::HashSlot* old, uint64_t old_capacity);

  format::HashShardHeader* header_ = nullptr;
  format::HashSlot* slots_ = nullptr;
  uint64_t max_capacity_ = 0;
  MappedFile* file_ = nullptr;
  uint64_t file_offset_ = 0;
  RehashScratch* scratch_ = nullptr;
};

template <typename Visit>
void HashShard::ForEach(Visit&& visit) const {
  const uint64_t capacity = header_->capacity;
  for (uint64_t i = 0; i < capacity; ++i) {
    if (slots_[i].address != 0) visit(ToRecord(slots_[i]));
  }
}

}  // namespace heapgraph
