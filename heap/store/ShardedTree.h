// heap/store/: what the two live-block trees share (LiveAllocationTree: SlabShards in heap.tree;
// VmRegionTree: SplayShards in vm.tree): up to kMaxShards shards over one MappedFile, one spin
// lock per shard and no global lock, totals summed over the shards, and fork support (copy under
// every lock, adopt). Each tree adds its own insert and remove: the VM-region tree keys a block's
// shard by its address (ShardFor: addresses within one 2^shard_shift window share a shard; each
// 64 MiB window, one glibc arena heap, spreads over its own group of shards); the heap tree puts
// a thread's blocks in that thread's shard and finds them again by their slot.
//
// `Shard` is the shard class: Attach(header, nodes, capacity, file, offset, extra...), Reset(),
// Lock(), Unlock(), live_count(), live_bytes(), header()->backed_bytes.
// `Layout` names the file's on-disk types: ShardHeader, Node (one table slot or tree node) and
// kVersion (the file's format version).
//
// File layout (docs/recording-format.md), the same for both trees:
//   [TreeHeader (64 bytes)][Layout::ShardHeader x shard_count] ... padding to nodes_offset ...
//   [shard 0: Layout::Node x shard_capacity][shard 1: ...] ...
// nodes_offset is page aligned; a shard's region is reserved on disk as it fills (backed_bytes).
// Invariant: the magic is written last, so a reader never takes a half-formatted file for a tree.
//
// Nothing here allocates from the heap, throws or calls virtual functions: the trees' inserts and
// removes are on every malloc and free. The members are instantiated once per tree, in
// LiveAllocationTree.cc and VmRegionTree.cc (the headers declare them `extern template`), so the
// hot path is the same out-of-line call as before the template existed.
#pragma once

#include <cstdint>
#include <cstring>

#include "heap/platform/ProcessBarrier.h"
#include "heap/store/BlockRecord.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

template <typename Shard, typename Layout>
class ShardedTree {
 public:
  using ShardHeader = typename Layout::ShardHeader;
  using Node = typename Layout::Node;
  static constexpr uint32_t kMaxShards = 1024;
  static constexpr uint32_t kDefaultShardShift = 12;
  // Node indices (and the shards' `writing` marker, 1 + an index) are 32-bit.
  static constexpr uint32_t kMaxCapacityLog2 = 31;

  ShardedTree(const ShardedTree&) = delete;
  ShardedTree& operator=(const ShardedTree&) = delete;

  // File size needed for `shards` shards of at most 2^capacity_log2 nodes (sparse; reserved as
  // the shards fill).
  static uint64_t FileSize(uint32_t shards, uint32_t capacity_log2);

  // Holds every shard lock: nothing can change (fork, stop-the-world snapshot).
  void LockAll();
  void UnlockAll();

  // Fork support (MappedFile::CopyTo / CopyToMemory / Adopt). The copies require LockAll: a copy
  // is then exactly the state the child inherits.
  bool CopyTo(int dir_fd, const char* name) const;
  int CopyToMemory(const char* name) const;
  bool Adopt(int dir_fd, const char* name) { return file_.Adopt(dir_fd, name); }
  bool AdoptMemoryCopy(int fd) { return file_.AdoptMemoryCopy(fd); }
  // After Adopt in a forked child: the copy was taken with every lock held; release them all.
  void ReleaseCopiedLocks() { UnlockAll(); }

  uint32_t shard_count() const { return shard_count_; }
  Shard& shard(uint32_t i) { return shards_[i]; }
  const Shard& shard(uint32_t i) const { return shards_[i]; }
  // glibc's arenas other than the main one take memory in heaps of at most 64 MiB aligned to
  // 64 MiB, one arena per thread until there are 8 per core: a 64 MiB window is one thread's.
  static constexpr uint32_t kArenaWindowShift = 26;
  // Shards that share the blocks of one 64 MiB window (format::TreeHeader::shard_group).
  uint32_t shard_group() const { return shard_group_; }
  Shard& ShardFor(uint64_t address) {
    uint64_t window = (address >> kArenaWindowShift) * shard_group_;
    uint64_t within = (address >> shard_shift_) & (shard_group_ - 1);
    return shards_[(window + within) & (shard_count_ - 1)];
  }
  uint64_t LiveCount() const;
  uint64_t LiveBytes() const;
  // Bytes of the file actually reserved (headers + reserved node pages): metadata cost.
  uint64_t ReservedBytes() const;
  const MappedFile& file() const { return file_; }

 protected:
  ShardedTree() = default;

  // A power-of-two shard count up to kMaxShards, and at most 2^kMaxCapacityLog2 nodes a shard.
  static bool ValidGeometry(uint32_t shards, uint32_t capacity_log2);

  // Creates `name` in `dir_fd` and formats an empty tree, each shard attached with
  // `shard_args...` after the arguments every shard takes. False (errno set by the failed call,
  // untouched for an invalid geometry) on failure.
  template <typename... ShardArgs>
  bool Format(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
              uint32_t shard_shift, ShardArgs... shard_args);

  // Runs op(shard) under the lock of `address`'s shard and returns what it returned.
  template <typename Op>
  bool WithShardLocked(uint64_t address, Op&& op) {
    Shard& s = ShardFor(address);
    s.Lock();
    bool ok = op(s);
    s.Unlock();
    return ok;
  }

  format::TreeHeader* tree_header() { return header_; }

 private:
  static_assert(sizeof(format::TreeHeader) <= 64);

  static uint64_t NodesOffset(uint32_t shards);
  // The parts of the file a copy needs: the headers and each shard's reserved nodes.
  size_t UsedRanges(MappedFile::Range* ranges) const;
  static uint32_t ShardGroup(uint32_t shards, uint32_t capacity_log2, uint32_t shard_shift);
  uint64_t RegionOffset(uint32_t shard) const {
    return header_->nodes_offset + shard * header_->shard_capacity * sizeof(Node);
  }

  MappedFile file_;
  format::TreeHeader* header_ = nullptr;
  Shard shards_[kMaxShards];
  uint32_t shard_count_ = 0;
  uint32_t shard_shift_ = kDefaultShardShift;
  uint32_t shard_group_ = 1;
};

// ShardFor's rule (the VM-region tree's; heap.tree records it for readers): a window's blocks go to
// a group of 8 shards (windows in turn to the next group), so that threads in different arenas
// rarely share a shard's lock or lines; as many as a window's blocks need when shards are small: a
// 64 MiB window holds at most 2^21 blocks (32-byte chunks), and the group's capacity must hold
// twice that. A window as large as the shard window, or a group as large as the tree, is the plain
// (address >> shard_shift) rule.
template <typename Shard, typename Layout>
uint32_t ShardedTree<Shard, Layout>::ShardGroup(uint32_t shards, uint32_t capacity_log2,
                                                uint32_t shard_shift) {
  constexpr uint32_t kMinGroup = 8, kWindowNeedLog2 = 22;
  if (shard_shift >= kArenaWindowShift) return shards;
  uint64_t group = kMinGroup;
  if (capacity_log2 < kWindowNeedLog2) {
    uint64_t need = uint64_t{1} << (kWindowNeedLog2 - capacity_log2);
    if (need > group) group = need;
  }
  return group < shards ? static_cast<uint32_t>(group) : shards;
}

template <typename Shard, typename Layout>
uint64_t ShardedTree<Shard, Layout>::NodesOffset(uint32_t shards) {
  // The shard headers follow the TreeHeader at offset 64; node regions start at the next page.
  uint64_t headers = 64 + uint64_t{shards} * sizeof(ShardHeader);
  return (headers + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
}

template <typename Shard, typename Layout>
uint64_t ShardedTree<Shard, Layout>::FileSize(uint32_t shards, uint32_t capacity_log2) {
  return NodesOffset(shards) + uint64_t{shards} * (uint64_t{1} << capacity_log2) * sizeof(Node);
}

template <typename Shard, typename Layout>
bool ShardedTree<Shard, Layout>::ValidGeometry(uint32_t shards, uint32_t capacity_log2) {
  return shards != 0 && shards <= kMaxShards && (shards & (shards - 1)) == 0 &&
         capacity_log2 <= kMaxCapacityLog2;
}

template <typename Shard, typename Layout>
template <typename... ShardArgs>
bool ShardedTree<Shard, Layout>::Format(int dir_fd, const char* name, uint32_t shards,
                                        uint32_t capacity_log2, uint32_t shard_shift,
                                        ShardArgs... shard_args) {
  if (!ValidGeometry(shards, capacity_log2)) return false;
  const uint64_t nodes_offset = NodesOffset(shards);
  const uint32_t capacity = uint32_t{1} << capacity_log2;
  if (!file_.Create(dir_fd, name, FileSize(shards, capacity_log2))) return false;
  if (!file_.Reserve(0, nodes_offset)) return false;
  header_ = reinterpret_cast<format::TreeHeader*>(file_.data());
  header_->node_size = sizeof(Node);
  header_->shard_count = shards;
  header_->shard_shift = shard_shift;
  header_->shard_capacity = capacity;
  header_->nodes_offset = nodes_offset;
  shard_count_ = shards;
  shard_shift_ = shard_shift;
  shard_group_ = ShardGroup(shards, capacity_log2, shard_shift);
  header_->shard_group = shard_group_;
  auto* shard_headers = reinterpret_cast<ShardHeader*>(file_.data() + 64);
  for (uint32_t i = 0; i < shards; ++i) {
    uint64_t offset = RegionOffset(i);
    shards_[i].Attach(&shard_headers[i], reinterpret_cast<Node*>(file_.data() + offset), capacity,
                      &file_, offset, shard_args...);
    shards_[i].Reset();
  }
  header_->file.version = Layout::kVersion;
  header_->file.header_size = static_cast<uint32_t>(nodes_offset);
  // The magic goes last: a reader never sees a half-formatted tree as valid.
  memcpy(header_->file.magic, format::kTreeMagic, sizeof(header_->file.magic));
  return true;
}

// Shards with owner threads (SlabShard) are frozen with one process-wide barrier for all.
template <typename Shard, typename Layout>
void ShardedTree<Shard, Layout>::LockAll() {
  if constexpr (requires(Shard & s) { s.BeginLock(); }) {
    bool owned = false;
    for (uint32_t i = 0; i < shard_count_; ++i) owned |= shards_[i].BeginLock();
    if (!owned) return;
    ProcessBarrier::Issue();
    for (uint32_t i = 0; i < shard_count_; ++i) shards_[i].AwaitOwner();
  } else {
    for (uint32_t i = 0; i < shard_count_; ++i) shards_[i].Lock();
  }
}

template <typename Shard, typename Layout>
void ShardedTree<Shard, Layout>::UnlockAll() {
  for (uint32_t i = shard_count_; i > 0; --i) shards_[i - 1].Unlock();
}

template <typename Shard, typename Layout>
size_t ShardedTree<Shard, Layout>::UsedRanges(MappedFile::Range* ranges) const {
  ranges[0] = {0, header_->nodes_offset};
  for (uint32_t i = 0; i < shard_count_; ++i) {
    ranges[i + 1] = {RegionOffset(i), shards_[i].header()->backed_bytes};
  }
  return shard_count_ + 1;
}

template <typename Shard, typename Layout>
bool ShardedTree<Shard, Layout>::CopyTo(int dir_fd, const char* name) const {
  MappedFile::Range ranges[kMaxShards + 1];
  return file_.CopyTo(dir_fd, name, ranges, UsedRanges(ranges));
}

template <typename Shard, typename Layout>
int ShardedTree<Shard, Layout>::CopyToMemory(const char* name) const {
  MappedFile::Range ranges[kMaxShards + 1];
  return file_.CopyToMemory(name, ranges, UsedRanges(ranges));
}

template <typename Shard, typename Layout>
uint64_t ShardedTree<Shard, Layout>::LiveCount() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].live_count();
  return n;
}

template <typename Shard, typename Layout>
uint64_t ShardedTree<Shard, Layout>::LiveBytes() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].live_bytes();
  return n;
}

template <typename Shard, typename Layout>
uint64_t ShardedTree<Shard, Layout>::ReservedBytes() const {
  uint64_t n = header_ == nullptr ? 0 : header_->nodes_offset;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].header()->backed_bytes;
  return n;
}

}  // namespace heapgraph
