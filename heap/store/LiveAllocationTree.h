// heap/store/: the live-allocation tree of heap blocks (heap.tree, format version 2, or 3 when it
// holds a sample): a ShardedTree of HashShards. What it adds to ShardedTree is the hash shards'
// shared RehashScratch (mapped at Create for a shard's largest table, used by a shard while it
// grows) and the sampled mark. Visiting is unordered; callers that need address order sort
// (LeakScan does). The VM-region tree, which needs Floor(), is VmRegionTree.
#pragma once

#include <cstdint>

#include "heap/store/HashShard.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/RehashScratch.h"
#include "heap/store/ShardedTree.h"

namespace heapgraph {

// heap.tree's on-disk types (format version 2).
struct HashTreeLayout {
  using ShardHeader = format::HashShardHeader;
  using Node = format::HashSlot;
  static constexpr uint32_t kVersion = format::kHashTreeVersion;
};

extern template class ShardedTree<HashShard, HashTreeLayout>;

class LiveAllocationTree : public ShardedTree<HashShard, HashTreeLayout> {
 public:
  // Creates `name` in `dir_fd` and formats an empty tree of `shards` shards of at most
  // 2^capacity_log2 slots. False with errno on failure.
  bool Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
              uint32_t shard_shift = kDefaultShardShift);

  // Marks the file as holding a sample (heap.tree version 3, TreeHeader.sample_mean = mean bytes
  // between sample points). Right after Create, before the first Insert.
  void MarkSampled(uint32_t mean);

  // Sets the ignored flag (BlockRecord::ignored) of the block starting at `address`, under its
  // shard's lock; false if no block starts there.
  bool MarkIgnored(uint64_t address);

  // Starts fetching the cache lines an Insert or Remove of `address` will touch first
  // (HashShard::Prefetch), so that their transfer from another core or from memory overlaps the
  // caller's work before the operation.
  void Prefetch(uint64_t address) { ShardFor(address).Prefetch(address); }

  const RehashScratch& scratch() const { return scratch_; }

 private:
  RehashScratch scratch_;  // shared by the shards while they grow
};

}  // namespace heapgraph
