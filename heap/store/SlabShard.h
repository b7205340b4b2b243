// heap/store/: one shard of the live-allocation tree: a slab of 24-byte slots (format::HashSlot)
// in the shard's region of a MappedFile. A block takes a free slot and keeps it until it
// is removed: slots never move, so whoever inserted a block can keep its slot's index (the
// recorder keeps it in a tag behind the block, heap/runtime/BlockTag) and remove it later without
// a search. A free slot is all zero (what readers expect); `capacity` in the header is the extent
// of slots ever used, [0, capacity), which is all a reader reads, and disk is reserved ahead of it
// in kReserveStep steps, never past the region's max_capacity. An insert takes the slot freed
// last (FreeSlotStacks, process memory), else the next one past the extent.
//
// Invariant for a reader after a kill at any instruction: `writing` holds 1 + the index of the one
// slot that may be torn, or 0; every other nonzero slot below `capacity` is one live block.
// Slot indices are below the region's max_capacity. Nothing here allocates from the heap or
// throws. Callers hold the shard lock around every operation except Lock/Unlock.
#pragma once

#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

// One cache line per shard object: free_count_ changes on every operation, and the threads that
// own neighbouring shards must not share its line.
class alignas(64) SlabShard {
 public:
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // Disk is reserved ahead of the extent in steps of this many bytes (one fallocate per ~2,700
  // new slots).
  static constexpr uint64_t kReserveStep = 64 * 1024;

  // The region holds `max_capacity` slots starting at `file_offset` in `file`.
  void Attach(format::HashShardHeader* header, format::HashSlot* slots, uint64_t max_capacity,
              MappedFile* file, uint64_t file_offset);
  // The shard's stack of free slots (FreeSlotStacks::stack), room for every slot of the region;
  // before the first Insert.
  void UseFreeStack(uint32_t* stack) { free_ = stack; }
  // Formats an empty shard.
  void Reset();

  void Lock();
  void Unlock();

  // Puts the block in a free slot and returns its index; kNoSlot if the shard is full, disk
  // cannot be reserved, or for address 0 (the caller may try another shard, or CountDropped).
  uint32_t Insert(const BlockRecord& block);
  void CountDropped() { ++header_->dropped; }
  // Removes the block in slot `index` if it starts at `address`; false otherwise.
  bool Remove(uint32_t index, uint64_t address, BlockRecord* removed);
  // Sets the ignored flag of the block in slot `index` if it starts at `address`.
  bool MarkIgnored(uint32_t index, uint64_t address);
  // The slot of the block starting at `address`, by reading every slot (tools and tests; the
  // recorder knows its blocks' slots).
  bool Find(uint64_t address, uint32_t* index) const;
  // Starts fetching slot `index`'s line for writing; only a hint (no lock needed, any index).
  void Prefetch(uint32_t index) const {
    if (index < max_capacity_) __builtin_prefetch(&slots_[index], 1, 3);
  }
  // True when slot `index` holds the block starting at `address`.
  bool Holds(uint32_t index, uint64_t address) const {
    return index < header_->capacity && slots_[index].address == address && address != 0;
  }

  // Visits every live block once, in slot order (not address order).
  template <typename Visit>
  void ForEach(Visit&& visit) const;

  uint64_t live_count() const { return header_->live_count; }
  uint64_t live_bytes() const { return header_->live_bytes; }
  uint64_t capacity() const { return header_->capacity; }
  uint64_t max_capacity() const { return max_capacity_; }
  const format::HashShardHeader* header() const { return header_; }
  const format::HashSlot* slots() const { return slots_; }

  static BlockRecord ToRecord(const format::HashSlot& slot);

 private:
  void Put(uint64_t index, const BlockRecord& block);
  void SetWriting(uint32_t value);
  // Reserves disk (whole kReserveStep steps, within the region) for slots [0, slots).
  bool ReserveFor(uint64_t slots);

  format::HashShardHeader* header_ = nullptr;
  format::HashSlot* slots_ = nullptr;
  uint64_t max_capacity_ = 0;
  MappedFile* file_ = nullptr;
  uint64_t file_offset_ = 0;
  uint32_t* free_ = nullptr;
  uint64_t free_count_ = 0;  // free_[0, free_count_) are the free slots below the extent
};

template <typename Visit>
void SlabShard::ForEach(Visit&& visit) const {
  const uint64_t capacity = header_->capacity;
  for (uint64_t i = 0; i < capacity; ++i) {
    if (slots_[i].address != 0) visit(ToRecord(slots_[i]));
  }
}

}  // namespace heapgraph
