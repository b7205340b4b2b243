// heap/store/: one shard of the live-allocation tree: a slab of 24-byte slots (format::HashSlot)
// in the shard's region of a MappedFile. A block takes a free slot and keeps it until it
// is removed: slots never move, so whoever inserted a block can keep its slot's index (the
// recorder keeps it in a tag behind the block, heap/runtime/BlockTag) and remove it later without
// a search. A free slot is all zero (what readers expect); `capacity` in the header is the extent
// of slots ever used, [0, capacity), which is all a reader reads, and disk is reserved ahead of it
// in kReserveStep steps, never past the region's max_capacity. An insert takes the slot freed
// last (FreeSlotStacks, process memory), else the next one past the extent.
//
// An owner thread (Claim) inserts into its shard and removes its own blocks there without a lock
// or any atomic read-modify-write: it marks itself busy, and goes through the lock only when a
// Lock() holder has frozen the shard (heap/platform/ProcessBarrier: the freezer pays a process-wide
// barrier, the owner only compiler barriers). Other threads free the owner's blocks beside it
// under the lock word alone (RemoveBesideOwner): they clear the slot (address first, without the
// `writing` marker, whose writer is the owner), count the block in freed_elsewhere_* and hand the
// slot back on a lock-free list that the owner takes whole when its stack is empty. A shard
// without an owner is changed under the lock word by anyone, as before owners existed.
//
// Invariant for a reader after a kill at any instruction: `writing` holds 1 + the index of the one
// slot that may be torn, or 0; apart from it, at most one slot (a free beside the owner) has a
// zero address and other nonzero words; every other nonzero slot below `capacity` is one live
// block. Slot indices are below the region's max_capacity. Nothing here allocates from the heap or
// throws. Insert, Remove, MarkIgnored and Find need Lock() (or a single thread); the owner's and
// the beside-owner operations lock what they need themselves.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

// The owner's fields fill one cache line and the other threads' another: free_count_ and busy_
// change on every owner operation, remote_head_ on every free beside the owner, and the threads
// that own neighbouring shards must not share a line either.
class alignas(64) SlabShard {
 public:
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // Disk is reserved ahead of the extent in steps of this many bytes (one fallocate per ~2,700
  // new slots).
  static constexpr uint64_t kReserveStep = 64 * 1024;

  // The region holds `max_capacity` slots starting at `file_offset` in `file`.
  void Attach(format::HashShardHeader* header, format::HashSlot* slots, uint64_t max_capacity,
              MappedFile* file, uint64_t file_offset);
  // The shard's stack of free slots and its links (FreeSlotStacks::stack, ::links), room for
  // every slot of the region; before the first Insert.
  void UseFreeStack(uint32_t* stack, uint32_t* links) {
    free_ = stack;
    links_ = links;
  }
  // Formats an empty shard.
  void Reset();

  // Excludes every other thread that changes the shard, its owner included.
  void Lock();
  void Unlock();
  // Lock() in two steps, so that one barrier serves many shards (ShardedTree::LockAll): takes the
  // lock word and returns true when an owner may be inside; then, after ProcessBarrier::Issue(),
  // AwaitOwner() waits until it is out.
  bool BeginLock();
  void AwaitOwner() const;

  // Makes the calling thread the shard's owner: false when it has one. Only where
  // ProcessBarrier::Available(). The owner gives it up with Release (never inside its own
  // operation); a forked child's copy forgets an owner that does not exist there (Disown, while
  // the child has one thread).
  bool Claim();
  void Release();
  void Disown() { owned_ = false; }
  bool owned() const { return owned_; }
  // The owner's operations (its thread only): Insert and Remove without the lock unless frozen.
  uint32_t InsertOwned(const BlockRecord& block);
  bool RemoveOwned(uint32_t index, uint64_t address, BlockRecord* removed);
  // Any other thread's, under the lock word only: an insert into a shard without an owner
  // (kNoSlot when it has one), and a removal (beside the owner when it has one).
  uint32_t InsertBesideOwner(const BlockRecord& block);
  bool RemoveBesideOwner(uint32_t index, uint64_t address, BlockRecord* removed);

  // Puts the block in a free slot and returns its index; kNoSlot if the shard is full, disk
  // cannot be reserved, or for address 0 (the caller may try another shard, or CountDropped).
  uint32_t Insert(const BlockRecord& block);
  // Counts one refused insert; takes the lock word itself (the owner never writes `dropped`).
  void CountDropped();
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

  uint64_t live_count() const { return header_->live_count - header_->freed_elsewhere_count; }
  uint64_t live_bytes() const { return header_->live_bytes - header_->freed_elsewhere_bytes; }
  uint64_t capacity() const { return header_->capacity; }
  uint64_t max_capacity() const { return max_capacity_; }
  const format::HashShardHeader* header() const { return header_; }
  const format::HashSlot* slots() const { return slots_; }

  static BlockRecord ToRecord(const format::HashSlot& slot);

 private:
  void Put(uint64_t index, const BlockRecord& block);
  void SetWriting(uint32_t value);
  // The owner's busy mark: false (not marked) when the shard is frozen.
  bool EnterAsOwner();
  void LeaveAsOwner() { busy_.store(0, std::memory_order_release); }
  // Removal beside the owner (lock word held, shard owned).
  bool RemoveElsewhere(uint32_t index, uint64_t address, BlockRecord* removed);
  // Moves the slots freed beside the owner onto the stack.
  void TakeFreedElsewhere();
  // Reserves disk (whole kReserveStep steps, within the region) for slots [0, slots).
  bool ReserveFor(uint64_t slots);

  // The owner's line.
  format::HashShardHeader* header_ = nullptr;
  format::HashSlot* slots_ = nullptr;
  MappedFile* file_ = nullptr;
  uint64_t file_offset_ = 0;
  uint32_t* free_ = nullptr;
  uint32_t* links_ = nullptr;
  uint32_t max_capacity_ = 0;        // at most 2^31 (ShardedTree::kMaxCapacityLog2)
  uint32_t free_count_ = 0;          // free_[0, free_count_) are the free slots below the extent
  std::atomic<uint32_t> busy_{0};    // the owner is inside an operation
  std::atomic<uint32_t> frozen_{0};  // a Lock() holder excludes the owner (set under the word)
  // The other threads' line. 1 + the first slot freed beside the owner (links_ chains the rest),
  // 0: none.
  alignas(64) std::atomic<uint32_t> remote_head_{0};
  bool owned_ = false;  // changed under the lock word
};
static_assert(sizeof(SlabShard) == 128);

template <typename Visit>
void SlabShard::ForEach(Visit&& visit) const {
  const uint64_t capacity = header_->capacity;
  for (uint64_t i = 0; i < capacity; ++i) {
    if (slots_[i].address != 0) visit(ToRecord(slots_[i]));
  }
}

}  // namespace heapgraph
