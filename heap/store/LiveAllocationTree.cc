#include "heap/store/LiveAllocationTree.h"

#include "heap/platform/ProcessBarrier.h"

namespace heapgraph {

template class ShardedTree<SlabShard, HashTreeLayout>;

bool LiveAllocationTree::Create(int dir_fd, const char* name, uint32_t shards,
                                uint32_t capacity_log2, uint32_t shard_shift) {
  if (!ValidGeometry(shards, capacity_log2)) return false;
  // The stacks are mapped before Format: once Format has written the magic the file is a valid
  // tree, so nothing may fail after it.
  if (!free_slots_.Map(shards, uint64_t{1} << capacity_log2)) return false;
  if (!Format(dir_fd, name, shards, capacity_log2, shard_shift)) {
    free_slots_.Unmap();  // no tree, no stacks (munmap leaves errno as the failed call set it)
    return false;
  }
  for (uint32_t i = 0; i < shards; ++i) {
    shard(i).UseFreeStack(free_slots_.stack(i), free_slots_.links(i));
  }
  owned_count_.store(0, std::memory_order_relaxed);
  return true;
}

void LiveAllocationTree::MarkSampled(uint32_t mean) {
  format::TreeHeader* header = tree_header();
  header->sample_mean = mean;
  header->file.version = mean == 0 ? format::kHashTreeVersion : format::kSampledTreeVersion;
}

uint32_t LiveAllocationTree::Claim(uint32_t first) {
  const uint32_t shards = shard_count();
  if (shards < 2 || !ProcessBarrier::Available()) return kNoShard;
  if (owned_count_.fetch_add(1, std::memory_order_relaxed) >= shards / 2) {
    owned_count_.fetch_sub(1, std::memory_order_relaxed);
    return kNoShard;
  }
  for (uint32_t n = 0; n < shards; ++n) {
    const uint32_t i = (first + n) & (shards - 1);
    if (shard(i).Claim()) return i;
  }
  owned_count_.fetch_sub(1, std::memory_order_relaxed);
  return kNoShard;
}

void LiveAllocationTree::Release(uint32_t i) {
  if (i >= shard_count()) return;
  shard(i).Release();
  owned_count_.fetch_sub(1, std::memory_order_relaxed);
}

void LiveAllocationTree::DisownAllBut(uint32_t kept) {
  // Only owned shards are written, and the count when it changed: in a forked child every write
  // copies a page it shared with its parent, and most shards were never owned.
  uint32_t owned = 0;
  for (uint32_t i = 0; i < shard_count(); ++i) {
    if (i != kept && shard(i).owned()) shard(i).Disown();
    if (shard(i).owned()) ++owned;
  }
  if (owned_count_.load(std::memory_order_relaxed) != owned) {
    owned_count_.store(owned, std::memory_order_relaxed);
  }
}

bool LiveAllocationTree::Insert(const BlockRecord& block, uint32_t first, Slot* slot, bool owned) {
  const uint32_t shards = shard_count();
  if (shards == 0) return false;  // not created
  first &= shards - 1;
  if (owned) {
    const uint32_t index = shard(first).InsertOwned(block);
    if (index != SlabShard::kNoSlot) {
      *slot = Slot{first, index};
      return true;
    }
    if (block.address == 0) return false;
  }
  for (uint32_t n = owned ? 1 : 0; n < shards; ++n) {
    const uint32_t i = (first + n) & (shards - 1);
    const uint32_t index = shard(i).InsertBesideOwner(block);
    if (index != SlabShard::kNoSlot) {
      *slot = Slot{i, index};
      return true;
    }
    if (block.address == 0) break;
  }
  shard(first).CountDropped();  // no shard had room: the first one counts the drop
  return false;
}

bool LiveAllocationTree::Remove(Slot slot, uint64_t address, BlockRecord* removed,
                                uint32_t own_shard) {
  if (slot.shard >= shard_count()) return false;
  SlabShard& s = shard(slot.shard);
  s.Prefetch(slot.index);  // the slot's line arrives while the lock is taken
  if (slot.shard == own_shard) return s.RemoveOwned(slot.index, address, removed);
  return s.RemoveBesideOwner(slot.index, address, removed);
}

bool LiveAllocationTree::MarkIgnored(Slot slot, uint64_t address) {
  if (slot.shard >= shard_count()) return false;
  SlabShard& s = shard(slot.shard);
  s.Lock();
  const bool found = s.MarkIgnored(slot.index, address);
  s.Unlock();
  return found;
}

bool LiveAllocationTree::Insert(const BlockRecord& block) {
  Slot slot;
  const uint32_t first = static_cast<uint32_t>(&ShardFor(block.address) - &shard(0));
  return Insert(block, first, &slot);
}

bool LiveAllocationTree::Find(uint64_t address, Slot* slot) {
  for (uint32_t i = 0; i < shard_count(); ++i) {
    SlabShard& s = shard(i);
    s.Lock();
    uint32_t index;
    const bool found = s.Find(address, &index);
    s.Unlock();
    if (found) {
      *slot = Slot{i, index};
      return true;
    }
  }
  return false;
}

bool LiveAllocationTree::Remove(uint64_t address, BlockRecord* removed) {
  Slot slot;
  return Find(address, &slot) && Remove(slot, address, removed);
}

}  // namespace heapgraph
