#include "heap/store/LiveAllocationTree.h"

namespace heapgraph {

template class ShardedTree<HashShard, HashTreeLayout>;

bool LiveAllocationTree::Create(int dir_fd, const char* name, uint32_t shards,
                                uint32_t capacity_log2, uint32_t shard_shift) {
  if (!ValidGeometry(shards, capacity_log2)) return false;
  // The scratch (room for a shard's largest table) is mapped before Format: once Format has
  // written the magic the file is a valid tree, so nothing may fail after it.
  if (!scratch_.Map(uint64_t{1} << capacity_log2)) return false;
  if (Format(dir_fd, name, shards, capacity_log2, shard_shift, &scratch_)) return true;
  scratch_.Unmap();  // no tree, no scratch (munmap leaves errno as the failed call set it)
  return false;
}

void LiveAllocationTree::MarkSampled(uint32_t mean) {
  format::TreeHeader* header = tree_header();
  header->sample_mean = mean;
  header->file.version = mean == 0 ? format::kHashTreeVersion : format::kSampledTreeVersion;
}

bool LiveAllocationTree::MarkIgnored(uint64_t address) {
  HashShard& shard = ShardFor(address);
  shard.Lock();
  bool found = shard.MarkIgnored(address);
  shard.Unlock();
  return found;
}

}  // namespace heapgraph
