#include "heap/store/HashShard.h"

#include <atomic>
#include <cstring>

#include "heap/store/ShardLock.h"

namespace heapgraph {

using format::HashSlot;

void HashShard::Attach(format::HashShardHeader* header, HashSlot* slots, uint64_t max_capacity,
                       MappedFile* file, uint64_t file_offset, RehashScratch* scratch) {
  header_ = header;
  slots_ = slots;
  max_capacity_ = max_capacity;
  file_ = file;
  file_offset_ = file_offset;
  scratch_ = scratch;
}

void HashShard::Reset() {
  header_->writing = 0;
  header_->capacity = 0;
  header_->live_count = 0;
  header_->live_bytes = 0;
  header_->dropped = 0;
  header_->backed_bytes = 0;
}

void HashShard::Lock() {
  LockShard(header_->lock);
}

void HashShard::Unlock() {
  UnlockShard(header_->lock);
}

BlockRecord HashShard::ToRecord(const HashSlot& slot) {
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
void HashShard::SetWriting(uint32_t value) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  header_->writing = value;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

bool HashShard::Lookup(uint64_t address, uint64_t* index) const {
  const HashSlot* const slots = slots_;
  const uint64_t capacity = header_->capacity;
  uint64_t i = Home(address, capacity);
  for (;;) {
    uint64_t a = slots[i].address;
    if (a == address || a == 0) {
      *index = i;
      return a == address;
    }
    i = i + 1 == capacity ? 0 : i + 1;  // terminates: the load stays below 1, an empty slot exists
  }
}

void HashShard::Put(uint64_t index, const BlockRecord& block) {
  HashSlot& s = slots_[index];
  s.address = block.address;
  s.size_function = HashSlot::Pack(block.size, block.function, block.ignored);
  s.stack = block.stack;
  s.seq = block.seq;
}

bool HashShard::Find(uint64_t address, BlockRecord* found) const {
  uint64_t i;
  if (address == 0 || header_->capacity == 0 || !Lookup(address, &i)) return false;
  *found = ToRecord(slots_[i]);
  return true;
}

bool HashShard::MarkIgnored(uint64_t address) {
  uint64_t i;
  if (address == 0 || header_->capacity == 0 || !Lookup(address, &i)) return false;
  slots_[i].size_function |= HashSlot::kIgnoredBit;  // one store: never torn
  return true;
}

bool HashShard::Upsert(const BlockRecord& block) {
  if (block.address == 0) return false;
  uint64_t i = 0;
  bool found = header_->capacity != 0 && Lookup(block.address, &i);
  if (!found && (header_->live_count + 1) * kMaxLoadDen > header_->capacity * kMaxLoadNum) {
    // Grow until the new block fits under the maximum load (one step, except near max_capacity).
    do {
      if (!Grow()) {
        ++header_->dropped;
        return false;
      }
    } while ((header_->live_count + 1) * kMaxLoadDen > header_->capacity * kMaxLoadNum);
    Lookup(block.address, &i);
  }
  SetWriting(static_cast<uint32_t>(i + 1));
  if (found) {
    header_->live_bytes -= slots_[i].size();
  } else {
    ++header_->live_count;
  }
  Put(i, block);
  header_->live_bytes += slots_[i].size();
  SetWriting(0);
  return true;
}

bool HashShard::Remove(uint64_t address, BlockRecord* removed) {
  uint64_t i;
  if (address == 0 || header_->capacity == 0 || !Lookup(address, &i)) return false;
  if (removed != nullptr) *removed = ToRecord(slots_[i]);
  SetWriting(static_cast<uint32_t>(i + 1));
  --header_->live_count;
  header_->live_bytes -= slots_[i].size();
  BackwardShift(i);
  SetWriting(0);
  return true;
}

// Closes the hole at `hole` (whose block is gone): each later member j of the probe run whose
// home does not lie cyclically in (hole, j] moves into the hole, and j becomes the hole. Invariant
// at every step: `writing` names the hole, the only slot that is not one distinct live block.
// Branch-free per member (whether a block moves is unpredictable at this load): a block that stays
// is the hole's own content copied onto itself, and `writing` is stored again unchanged.
void HashShard::BackwardShift(uint64_t hole) {
  HashSlot* const slots = slots_;
  const uint64_t capacity = header_->capacity;
  uint64_t j = hole;
  for (;;) {
    j = j + 1 == capacity ? 0 : j + 1;
    const uint64_t a = slots[j].address;
    if (a == 0) break;
    // Distances back from j: the block stays when its home is nearer than the hole.
    const uint64_t home = Home(a, capacity);
    const uint64_t from_home = (j >= home ? 0 : capacity) + j - home;
    const uint64_t from_hole = (j >= hole ? 0 : capacity) + j - hole;
    const uint64_t moves = uint64_t{0} - static_cast<uint64_t>(from_home >= from_hole);  // mask
    const uint64_t next_hole = hole ^ ((hole ^ j) & moves);
    slots[hole] = slots[next_hole];
    SetWriting(static_cast<uint32_t>(next_hole + 1));
    hole = next_hole;
  }
  slots[hole] = HashSlot{};
}

// Reserves disk for the table's slots, in whole pages, never past the shard's region.
bool HashShard::ReserveFor(uint64_t capacity) {
  uint64_t need = capacity * sizeof(HashSlot);
  if (need <= header_->backed_bytes) return true;
  uint64_t region = max_capacity_ * sizeof(HashSlot);
  uint64_t target = (need + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
  if (target > region) target = region;
  if (!file_->Reserve(file_offset_ + header_->backed_bytes, target - header_->backed_bytes)) {
    return false;
  }
  header_->backed_bytes = target;
  return true;
}

// Grows the table in place. Invariant kept: slots in [capacity, max_capacity) are always zero
// (the file is sparse and only slots below capacity are ever written), so the new slots need no
// clearing. False if the shard is at max_capacity or disk or scratch memory is unavailable.
bool HashShard::Grow() {
  uint64_t old_capacity = header_->capacity;
  if (old_capacity >= max_capacity_) return false;
  uint64_t capacity = old_capacity * kGrowNum / kGrowDen;
  if (capacity < kInitialCapacity) capacity = kInitialCapacity;
  if (capacity > max_capacity_) capacity = max_capacity_;
  if (!ReserveFor(capacity)) return false;
  if (old_capacity == 0) {
    header_->capacity = capacity;
    return true;
  }
  HashSlot* scratch = scratch_->Acquire(old_capacity);
  if (scratch == nullptr) return false;
  memcpy(static_cast<void*>(scratch), slots_, old_capacity * sizeof(HashSlot));
  SetWriting(format::kRehashing);
  header_->capacity = capacity;
  Rehash(scratch, old_capacity);
  SetWriting(0);
  scratch_->Release(old_capacity);
  return true;
}

// Clears the old table and reinserts every block of `old` into the (already larger) table.
void HashShard::Rehash(const HashSlot* old, uint64_t old_capacity) {
  memset(static_cast<void*>(slots_), 0, old_capacity * sizeof(HashSlot));
  for (uint64_t k = 0; k < old_capacity; ++k) {
    if (old[k].address == 0) continue;
    uint64_t i = Home(old[k].address, header_->capacity);
    while (slots_[i].address != 0) i = Next(i);
    slots_[i] = old[k];
  }
}

}  // namespace heapgraph
