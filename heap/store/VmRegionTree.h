// heap/store/: the VM-region tree (vm.tree, format version 1): a ShardedTree of SplayShards. What
// it adds to ShardedTree is its keyed insert and remove and Floor(), the reason it stays a splay
// tree (the heap tree is LiveAllocationTree, slab shards). The recorder uses one shard so that
// Floor() sees every region (partial munmap/mremap).
#pragma once

#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/ShardedTree.h"
#include "heap/store/SplayShard.h"

namespace heapgraph {

// vm.tree's on-disk types (format version 1).
struct SplayTreeLayout {
  using ShardHeader = format::ShardHeader;
  using Node = format::TreeNode;
  static constexpr uint32_t kVersion = format::kVersion;
};

extern template class ShardedTree<SplayShard, SplayTreeLayout>;

class VmRegionTree : public ShardedTree<SplayShard, SplayTreeLayout> {
 public:
  // Creates `name` in `dir_fd` and formats an empty tree of `shards` shards of 2^capacity_log2
  // nodes. False with errno on failure.
  bool Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
              uint32_t shard_shift = kDefaultShardShift);

  // Inserts, or overwrites the region at the same address; false if its shard refused it.
  bool Insert(const BlockRecord& block) {
    return WithShardLocked(block.address, [&](SplayShard& s) { return s.Upsert(block); });
  }
  // Removes the region starting at `address`; false if there is none.
  bool Remove(uint64_t address, BlockRecord* removed) {
    return WithShardLocked(address, [&](SplayShard& s) { return s.Remove(address, removed); });
  }

  // The block with the greatest address <= `address` within the same shard window (VM regions).
  bool Floor(uint64_t address, BlockRecord* found);
};

}  // namespace heapgraph
