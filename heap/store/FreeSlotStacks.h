// heap/store/: the free slots of a LiveAllocationTree's shards below their extent: one stack of
// slot indices per shard, in one anonymous MAP_NORESERVE mapping made at Create (raw syscalls; 4
// bytes of room per slot of every region, backed only where a stack has grown). A shard pops the
// slot it freed last (its line is likely still in cache) and pushes each slot it frees. Process
// memory, never in the file: a reader knows a free slot by its zeroes, and a forked child
// inherits the stacks with the tree's memory. Shard i's stack starts at stack(i); each shard
// changes its own under its lock or by its owner thread (SlabShard.h). Beside each stack, room for
// one link per slot (links(i)): the list of slots that other threads freed in an owned shard.
#pragma once

#include <cstdint>

namespace heapgraph {

class FreeSlotStacks {
 public:
  FreeSlotStacks() = default;
  FreeSlotStacks(const FreeSlotStacks&) = delete;
  FreeSlotStacks& operator=(const FreeSlotStacks&) = delete;

  // Reserves room for `shards` stacks of up to `slots_per_shard` indices and as many links each.
  // False if mmap fails.
  // Like MappedFile there is no destructor: the recorder's trees live until the process exits;
  // owners that end earlier call Unmap.
  bool Map(uint64_t shards, uint64_t slots_per_shard);
  void Unmap();
  uint32_t* stack(uint64_t shard) const { return entries_ + 2 * shard * slots_per_shard_; }
  uint32_t* links(uint64_t shard) const { return stack(shard) + slots_per_shard_; }

  // The reserved address range (0, 0 if not mapped): heapgraph's own memory, never a scan root.
  uint64_t begin() const { return reinterpret_cast<uint64_t>(entries_); }
  uint64_t end() const { return begin() + bytes_; }

 private:
  uint32_t* entries_ = nullptr;
  uint64_t slots_per_shard_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace heapgraph
