#include "heap/store/VmRegionTree.h"

#include <cstring>

namespace heapgraph {

using format::ShardHeader;
using format::TreeHeader;
using format::TreeNode;

namespace {

uint64_t NodesOffset(uint32_t shards) {
  // ShardHeaders follow the TreeHeader at offset 64; node arrays start at the next page.
  uint64_t headers = 64 + uint64_t{shards} * sizeof(ShardHeader);
  return (headers + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
}

uint64_t ShardBytes(uint32_t capacity_log2) {
  return (uint64_t{1} << capacity_log2) * sizeof(TreeNode);
}

}  // namespace

static_assert(sizeof(TreeHeader) <= 64);

uint64_t VmRegionTree::FileSize(uint32_t shards, uint32_t capacity_log2) {
  return NodesOffset(shards) + uint64_t{shards} * ShardBytes(capacity_log2);
}

bool VmRegionTree::Create(int dir_fd, const char* name, uint32_t shards, uint32_t capacity_log2,
                          uint32_t shard_shift) {
  if (shards == 0 || shards > kMaxShards || (shards & (shards - 1)) != 0) return false;
  uint64_t nodes_offset = NodesOffset(shards);
  if (!file_.Create(dir_fd, name, FileSize(shards, capacity_log2))) return false;
  if (!file_.Reserve(0, nodes_offset)) return false;
  header_ = reinterpret_cast<TreeHeader*>(file_.data());
  shard_count_ = shards;
  shard_shift_ = shard_shift;
  auto* shard_headers = reinterpret_cast<ShardHeader*>(file_.data() + 64);
  for (uint32_t i = 0; i < shards; ++i) {
    uint64_t offset = nodes_offset + i * ShardBytes(capacity_log2);
    shards_[i].Attach(&shard_headers[i], reinterpret_cast<TreeNode*>(file_.data() + offset),
                      1u << capacity_log2, &file_, offset);
    shards_[i].Reset();
  }
  header_->node_size = sizeof(TreeNode);
  header_->shard_count = shards;
  header_->shard_shift = shard_shift;
  header_->shard_capacity = uint64_t{1} << capacity_log2;
  header_->nodes_offset = nodes_offset;
  header_->file.version = format::kVersion;
  header_->file.header_size = static_cast<uint32_t>(nodes_offset);
  // The magic goes last: a reader never sees a half-formatted tree as valid.
  memcpy(header_->file.magic, format::kTreeMagic, sizeof(header_->file.magic));
  return true;
}

bool VmRegionTree::Insert(const BlockRecord& block) {
  SplayShard& s = ShardFor(block.address);
  s.Lock();
  bool ok = s.Upsert(block);
  s.Unlock();
  return ok;
}

bool VmRegionTree::Remove(uint64_t address, BlockRecord* removed) {
  SplayShard& s = ShardFor(address);
  s.Lock();
  bool ok = s.Remove(address, removed);
  s.Unlock();
  return ok;
}

bool VmRegionTree::Floor(uint64_t address, BlockRecord* found) {
  SplayShard& s = ShardFor(address);
  s.Lock();
  bool ok = s.Floor(address, found);
  s.Unlock();
  return ok;
}

void VmRegionTree::LockAll() {
  for (uint32_t i = 0; i < shard_count_; ++i) shards_[i].Lock();
}

void VmRegionTree::UnlockAll() {
  for (uint32_t i = shard_count_; i > 0; --i) shards_[i - 1].Unlock();
}

bool VmRegionTree::CopyTo(int dir_fd, const char* name) const {
  MappedFile::Range ranges[kMaxShards + 1];
  ranges[0] = {0, header_->nodes_offset};
  for (uint32_t i = 0; i < shard_count_; ++i) {
    uint64_t offset = header_->nodes_offset + i * header_->shard_capacity * sizeof(TreeNode);
    ranges[i + 1] = {offset, shards_[i].header()->backed_bytes};
  }
  return file_.CopyTo(dir_fd, name, ranges, shard_count_ + 1);
}

uint64_t VmRegionTree::LiveCount() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].live_count();
  return n;
}

uint64_t VmRegionTree::LiveBytes() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].live_bytes();
  return n;
}

uint64_t VmRegionTree::ReservedBytes() const {
  uint64_t n = header_ == nullptr ? 0 : header_->nodes_offset;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].header()->backed_bytes;
  return n;
}

}  // namespace heapgraph
