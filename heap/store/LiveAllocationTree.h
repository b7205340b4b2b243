// heap/store/: the live-allocation tree of heap blocks (heap.tree, format version 2, or 3 when it
// holds a sample): a ShardedTree of SlabShards. A block goes into the shard its inserter names
// (the recorder names its thread's own shard, so a thread's inserts rarely meet another thread on
// a lock or a line) or, when that one is full, the next one that has room; it stays in that slot
// until removed, and the inserter keeps the slot (Slot) to remove it without a search. What it
// adds to ShardedTree: those operations, the shards' FreeSlotStacks and the sampled mark. Visiting
// is unordered; callers that need address order sort (LeakScan does). The VM-region tree, keyed
// by address and needing Floor(), is VmRegionTree.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/store/FreeSlotStacks.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/ShardedTree.h"
#include "heap/store/SlabShard.h"

namespace heapgraph {

// heap.tree's on-disk types (format version 2).
struct HashTreeLayout {
  using ShardHeader = format::HashShardHeader;
  using Node = format::HashSlot;
  static constexpr uint32_t kVersion = format::kHashTreeVersion;
};

extern template class ShardedTree<SlabShard, HashTreeLayout>;

class LiveAllocationTree : public ShardedTree<SlabShard, HashTreeLayout> {
 public:
  // Where a block is: its shard and its slot there.
  struct Slot {
    uint32_t shard = 0;
    uint32_t index = SlabShard::kNoSlot;
  };

  // Creates `name` in `dir_fd` and formats an empty tree of `shards` shards of at most
  // 2^capacity_log2 slots. False with errno on failure.
  bool Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
              uint32_t shard_shift = kDefaultShardShift);
  // Marks the file as holding a sample (heap.tree version 3, TreeHeader.sample_mean = mean bytes
  // between sample points). Right after Create, before the first Insert.
  void MarkSampled(uint32_t mean);

  static constexpr uint32_t kNoShard = UINT32_MAX;

  // Makes the calling thread the owner of shard `shard`, or of the next one without an owner
  // (SlabShard::Claim), and returns it; kNoShard where owners cannot be (ProcessBarrier
  // unavailable) or when half the shards have one already (the rest stay for threads without).
  uint32_t Claim(uint32_t shard);
  // The owner gives its shard up (thread exit).
  void Release(uint32_t shard);
  // A forked child, while it has one thread: only `kept` (the forking thread's shard, or
  // kNoShard) still has an owner.
  void DisownAllBut(uint32_t kept);

  // Puts the block in shard `shard` (taken modulo the shard count; `owned`: the caller owns it),
  // or in the next shard with room and no owner when that one is full; false (counted as dropped
  // by shard `shard`) if none has room.
  bool Insert(const BlockRecord& block, uint32_t shard, Slot* slot, bool owned = false);
  // Removes the block in `slot` if it starts at `address`; false otherwise. `own_shard`: the
  // shard the caller owns (kNoShard: none).
  bool Remove(Slot slot, uint64_t address, BlockRecord* removed, uint32_t own_shard = kNoShard);
  // Sets the ignored flag (BlockRecord::ignored) of the block in `slot` if it starts at `address`.
  bool MarkIgnored(Slot slot, uint64_t address);
  // Starts fetching `slot`'s line for writing; only a hint (no lock, any slot).
  void Prefetch(Slot slot) const {
    if (slot.shard < shard_count()) shard(slot.shard).Prefetch(slot.index);
  }
  // True when `slot` holds the block starting at `address` (no lock: a racy read of one word).
  bool Holds(Slot slot, uint64_t address) const {
    return slot.shard < shard_count() && shard(slot.shard).Holds(slot.index, address);
  }

  // For tools, tests and benchmarks that know only an address: insert into the shard ShardFor
  // names, and find a block by reading every slot (O(live blocks): never on a hot path).
  bool Insert(const BlockRecord& block);
  bool Find(uint64_t address, Slot* slot);
  bool Remove(uint64_t address, BlockRecord* removed);

  const FreeSlotStacks& free_slots() const { return free_slots_; }

 private:
  FreeSlotStacks free_slots_;
  std::atomic<uint32_t> owned_count_{0};
};

}  // namespace heapgraph
