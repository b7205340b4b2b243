// heap/store/: the VM-region tree (vm.tree, format version 1): SplayShards over one MappedFile, a
// region's shard chosen by its address (addresses within one 2^shard_shift window share a shard).
// The recorder uses one shard so that Floor() sees every region (partial munmap/mremap). Kept a
// splay tree for Floor(); the heap tree is LiveAllocationTree (hash shards). No global lock.
#pragma once

#include <cstdint>

#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/SplayShard.h"

namespace heapgraph {

class VmRegionTree {
 public:
  static constexpr uint32_t kMaxShards = 1024;
  static constexpr uint32_t kDefaultShardShift = 12;

  // File size needed for `shards` shards of 2^capacity_log2 nodes (sparse; reserved as it fills).
  static uint64_t FileSize(uint32_t shards, uint32_t capacity_log2);

  // Creates `name` in `dir_fd` and formats an empty tree. False with errno on failure.
  bool Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
              uint32_t shard_shift = kDefaultShardShift);

  bool Insert(const BlockRecord& block);
  bool Remove(uint64_t address, BlockRecord* removed);
  // The block with the greatest address <= `address` within the same shard window (VM regions).
  bool Floor(uint64_t address, BlockRecord* found);

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
  SplayShard& shard(uint32_t i) { return shards_[i]; }
  SplayShard& ShardFor(uint64_t address) {
    return shards_[(address >> shard_shift_) & (shard_count_ - 1)];
  }
  uint64_t LiveCount() const;
  uint64_t LiveBytes() const;
  // Bytes of the file actually reserved (headers + reserved node chunks): metadata cost.
  uint64_t ReservedBytes() const;
  const MappedFile& file() const { return file_; }

 private:
  MappedFile file_;
  format::TreeHeader* header_ = nullptr;
  SplayShard shards_[kMaxShards];
  uint32_t shard_count_ = 0;
  uint32_t shard_shift_ = kDefaultShardShift;
};

}  // namespace heapgraph
