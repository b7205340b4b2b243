#include "heap/store/SlabShard.h"

#include <atomic>

#include "heap/store/ShardLock.h"

namespace heapgraph {

using format::HashSlot;

void SlabShard::Attach(format::HashShardHeader* header, HashSlot* slots, uint64_t max_capacity,
                       MappedFile* file, uint64_t file_offset) {
  header_ = header;
  slots_ = slots;
  max_capacity_ = max_capacity;
  file_ = file;
  file_offset_ = file_offset;
  free_count_ = 0;
}

void SlabShard::Reset() {
  header_->writing = 0;
  header_->capacity = 0;
  header_->live_count = 0;
  header_->live_bytes = 0;
  header_->dropped = 0;
  header_->backed_bytes = 0;
}

void SlabShard::Lock() {
  LockShard(header_->lock);
}

void SlabShard::Unlock() {
  UnlockShard(header_->lock);
}

BlockRecord SlabShard::ToRecord(const HashSlot& slot) {
  BlockRecord r;
  r.address = slot.address;
  r.size = slot.size();
  r.stack = slot.stack;
  r.seq = slot.seq;
  r.function = slot.function();
  r.ignored = slot.ignored();
  return r;
}

// The compiler fences keep the marker's store ordered with the slot stores around it, so that a
// process killed at any instruction leaves `writing` naming the one slot that may be torn.
void SlabShard::SetWriting(uint32_t value) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  header_->writing = value;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

void SlabShard::Put(uint64_t index, const BlockRecord& block) {
  HashSlot& s = slots_[index];
  s.address = block.address;
  s.size_function = HashSlot::Pack(block.size, block.function, block.ignored);
  s.stack = block.stack;
  s.seq = block.seq;
}

bool SlabShard::ReserveFor(uint64_t slots) {
  const uint64_t need = slots * sizeof(HashSlot);
  if (need <= header_->backed_bytes) return true;
  const uint64_t region = max_capacity_ * sizeof(HashSlot);
  uint64_t target = (need + kReserveStep - 1) / kReserveStep * kReserveStep;
  if (target > region) target = region;
  if (!file_->Reserve(file_offset_ + header_->backed_bytes, target - header_->backed_bytes)) {
    return false;
  }
  header_->backed_bytes = target;
  return true;
}

uint32_t SlabShard::Insert(const BlockRecord& block) {
  uint64_t index;
  if (block.address == 0) {
    index = max_capacity_;
  } else if (free_count_ != 0) {
    index = free_[--free_count_];
  } else {
    index = header_->capacity;
    if (index < max_capacity_ && !ReserveFor(index + 1)) index = max_capacity_;
  }
  if (index == max_capacity_) return kNoSlot;
  // The extent grows before the slot is written: a reader always reads the slot being written.
  if (index == header_->capacity) header_->capacity = index + 1;
  SetWriting(static_cast<uint32_t>(index + 1));
  Put(index, block);
  ++header_->live_count;
  header_->live_bytes += slots_[index].size();
  SetWriting(0);
  return static_cast<uint32_t>(index);
}

bool SlabShard::Remove(uint32_t index, uint64_t address, BlockRecord* removed) {
  if (!Holds(index, address)) return false;
  if (removed != nullptr) *removed = ToRecord(slots_[index]);
  SetWriting(index + 1);
  --header_->live_count;
  header_->live_bytes -= slots_[index].size();
  slots_[index] = HashSlot{};
  SetWriting(0);
  free_[free_count_++] = index;
  return true;
}

bool SlabShard::MarkIgnored(uint32_t index, uint64_t address) {
  if (!Holds(index, address)) return false;
  slots_[index].size_function |= HashSlot::kIgnoredBit;  // one store: never torn
  return true;
}

bool SlabShard::Find(uint64_t address, uint32_t* index) const {
  if (address == 0) return false;
  const uint64_t capacity = header_->capacity;
  for (uint64_t i = 0; i < capacity; ++i) {
    if (slots_[i].address == address) {
      *index = static_cast<uint32_t>(i);
      return true;
    }
  }
  return false;
}

}  // namespace heapgraph
