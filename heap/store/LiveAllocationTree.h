// heap/store/: the live-allocation tree of heap blocks (heap.tree, format version 2): HashShards
// over one MappedFile, a block's shard chosen by its address (addresses within one 2^shard_shift
// window share a shard, so threads working in different arenas rarely meet on a lock). There is
// no global lock. Visiting is unordered; callers that need address order sort (LeakScan does).
// The VM-region tree, which needs Floor(), is VmRegionTree.
#pragma once

#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/HashShard.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class LiveAllocationTree {
 public:
  static constexpr uint32_t kMaxShards = 1024;
  static constexpr uint32_t kDefaultShardShift = 12;

  // File size needed for `shards` shards of at most 2^capacity_log2 slots (sparse; reserved as
  // the tables grow).
  static uint64_t FileSize(uint32_t shards, uint32_t capacity_log2);

  // Creates `name` in `dir_fd` and formats an empty tree. False with errno on failure.
  bool Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
              uint32_t shard_shift = kDefaultShardShift);

  // Marks the file as holding a sample (heap.tree version 3, TreeHeader.sample_mean = mean bytes
  // between sample points). Right after Create, before the first Insert.
  void MarkSampled(uint32_t mean);

  bool Insert(const BlockRecord& block);
  bool Remove(uint64_t address, BlockRecord* removed);

  // Holds every shard lock: nothing can change (fork, stop-the-world snapshot).
  void LockAll();
  void UnlockAll();

  // Fork support (MappedFile::CopyTo / Adopt). CopyTo requires LockAll: the copy is then exactly
  // the state the child inherits.
  bool CopyTo(int dir_fd, const char* name) const;
  bool Adopt(int dir_fd, const char* name) { return file_.Adopt(dir_fd, name); }
  // After Adopt in a forked child: the copy was taken with every lock held; release them all.
  void ReleaseCopiedLocks() { UnlockAll(); }

  uint32_t shard_count() const { return shard_count_; }
  HashShard& shard(uint32_t i) { return shards_[i]; }
  const RehashScratch& scratch() const { return scratch_; }
  HashShard& ShardFor(uint64_t address) {
    return shards_[(address >> shard_shift_) & (shard_count_ - 1)];
  }
  uint64_t LiveCount() const;
  uint64_t LiveBytes() const;
  // Bytes of the file actually reserved (headers + reserved table pages): metadata cost.
  uint64_t ReservedBytes() const;
  const MappedFile& file() const { return file_; }

 private:
  MappedFile file_;
  RehashScratch scratch_;  // shared by the shards while they grow
  format::TreeHeader* header_ = nullptr;
  HashShard shards_[kMaxShards];
  uint32_t shard_count_ = 0;
  uint32_t shard_shift_ = kDefaultShardShift;
};

}  // namespace heapgraph
