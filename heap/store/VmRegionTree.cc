#include "heap/store/VmRegionTree.h"

namespace heapgraph {

template class ShardedTree<SplayShard, SplayTreeLayout>;

bool VmRegionTree::Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
                          uint32_t shard_shift) {
  return Format(dir_fd, name, shards, capacity_log2, shard_shift);
}

bool VmRegionTree::Floor(uint64_t address, BlockRecord* found) {
  return WithShardLocked(address, [&](SplayShard& s) { return s.Floor(address, found); });
}

}  // namespace heapgraph
