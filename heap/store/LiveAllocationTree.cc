#include "heap/store/LiveAllocationTree.h"

#include <cstring>

namespace heapgraph {

using format::HashShardHeader;
using format::HashSlot;
using format::TreeHeader;

namespace {

uint64_t NodesOffset(uint32_t shards) {
  // HashShardHeaders follow the TreeHeader at offset 64; slot regions start at the next page.
  uint64_t headers = 64 + uint64_t{shards} * sizeof(HashShardHeader);
  return (headers + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
}

uint64_t RegionBytes(uint64_t max_capacity) {
  return max_capacity * sizeof(HashSlot);
}

}  // namespace

static_assert(sizeof(TreeHeader) <= 64);

uint64_t LiveAllocationTree::FileSize(uint32_t shards, uint32_t capacity_log2) {
  return NodesOffset(shards) + uint64_t{shards} * RegionBytes(uint64_t{1} << capacity_log2);
}

bool LiveAllocationTree::Create(int dir_fd, const char* name, uint32_t shards,
                                uint32_t capacity_log2, uint32_t shard_shift) {
  if (shards == 0 || shards > kMaxShards || (shards & (shards - 1)) != 0) return false;
  if (capacity_log2 > 31) return false;  // `writing` must hold 1 + any slot index
  uint64_t nodes_offset = NodesOffset(shards);
  uint64_t max_capacity = uint64_t{1} << capacity_log2;
  if (!file_.Create(dir_fd, name, FileSize(shards, capacity_log2))) return false;
  if (!file_.Reserve(0, nodes_offset) || !scratch_.Map(max_capacity)) return false;
  header_ = reinterpret_cast<TreeHeader*>(file_.data());
  shard_count_ = shards;
  shard_shift_ = shard_shift;
  auto* shard_headers = reinterpret_cast<HashShardHeader*>(file_.data() + 64);
  for (uint32_t i = 0; i < shards; ++i) {
    uint64_t offset = nodes_offset + i * RegionBytes(max_capacity);
    shards_[i].Attach(&shard_headers[i], reinterpret_cast<HashSlot*>(file_.data() + offset),
                      max_capacity, &file_, offset, &scratch_);
    shards_[i].Reset();
  }
  header_->node_size = sizeof(HashSlot);
  header_->shard_count = shards;
  header_->shard_shift = shard_shift;
  header_->shard_capacity = max_capacity;
  header_->nodes_offset = nodes_offset;
  header_->file.version = format::kHashTreeVersion;
  header_->file.header_size = static_cast<uint32_t>(nodes_offset);
  // The magic goes last: a reader never sees a half-formatted tree as valid.
  memcpy(header_->file.magic, format::kTreeMagic, sizeof(header_->file.magic));
  return true;
}

void LiveAllocationTree::MarkSampled(uint32_t mean) {
  header_->sample_mean = mean;
  header_->file.version = mean == 0 ? format::kHashTreeVersion : format::kSampledTreeVersion;
}

bool LiveAllocationTree::Insert(const BlockRecord& block) {
  HashShard& s = ShardFor(block.address);
  s.Lock();
  bool ok = s.Upsert(block);
  s.Unlock();
  return ok;
}

bool LiveAllocationTree::Remove(uint64_t address, BlockRecord* removed) {
  HashShard& s = ShardFor(address);
  s.Lock();
  bool ok = s.Remove(address, removed);
  s.Unlock();
  return ok;
}

void LiveAllocationTree::LockAll() {
  for (uint32_t i = 0; i < shard_count_; ++i) shards_[i].Lock();
}

void LiveAllocationTree::UnlockAll() {
  for (uint32_t i = shard_count_; i > 0; --i) shards_[i - 1].Unlock();
}

bool LiveAllocationTree::CopyTo(int dir_fd, const char* name) const {
  MappedFile::Range ranges[kMaxShards + 1];
  ranges[0] = {0, header_->nodes_offset};
  for (uint32_t i = 0; i < shard_count_; ++i) {
    uint64_t offset = header_->nodes_offset + i * RegionBytes(header_->shard_capacity);
    ranges[i + 1] = {offset, shards_[i].header()->backed_bytes};
  }
  return file_.CopyTo(dir_fd, name, ranges, shard_count_ + 1);
}

uint64_t LiveAllocationTree::LiveCount() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].live_count();
  return n;
}

uint64_t LiveAllocationTree::LiveBytes() const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].live_bytes();
  return n;
}

uint64_t LiveAllocationTree::ReservedBytes() const {
  uint64_t n = header_ == nullptr ? 0 : header_->nodes_offset;
  for (uint32_t i = 0; i < shard_count_; ++i) n += shards_[i].header()->backed_bytes;
  return n;
}

}  // namespace heapgraph
