#include "heap/store/SlabShard.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "heap/platform/ProcessBarrier.h"
#include "heap/store/ShardLock.h"

namespace heapgraph {

using format::HashSlot;

void SlabShard::Attach(format::HashShardHeader* header, HashSlot* slots, uint64_t max_capacity,
                       MappedFile* file, uint64_t file_offset) {
  header_ = header;
  slots_ = slots;
  max_capacity_ = static_cast<uint32_t>(max_capacity);
  file_ = file;
  file_offset_ = file_offset;
  free_count_ = 0;
  owned_ = false;
  remote_head_.store(0, std::memory_order_relaxed);
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
  if (BeginLock()) {
    ProcessBarrier::Issue();
    AwaitOwner();
  }
}

void SlabShard::Unlock() {
  // Cleared only when set (only a holder of the word sets it): a forked child releasing its copied
  // locks then writes no page it still shares with its parent for an unowned shard.
  if (frozen_.load(std::memory_order_relaxed) != 0) frozen_.store(0, std::memory_order_relaxed);
  UnlockShard(header_->lock);
}

bool SlabShard::BeginLock() {
  LockShard(header_->lock);
  if (!owned_) return false;
  frozen_.store(1, std::memory_order_relaxed);
  return true;
}

// The owner is inside one short operation: spin, then yield (it was preempted there), then sleep
// (it is stopped there, by a debugger say: waiting costs no CPU, as on a held lock word).
void SlabShard::AwaitOwner() const {
  for (unsigned waits = 0; busy_.load(std::memory_order_acquire) != 0; ++waits) {
    if (waits < shard_lock::kSpins) {
      CpuRelax();
    } else if (waits < 2 * shard_lock::kSpins) {
      syscall(SYS_sched_yield);
    } else {
      const struct timespec pause = {0, 100 * 1000};
      syscall(SYS_nanosleep, &pause, nullptr);
    }
  }
}

bool SlabShard::Claim() {
  LockShard(header_->lock);
  const bool claimed = !owned_;
  owned_ = true;
  UnlockShard(header_->lock);
  return claimed;
}

void SlabShard::Release() {
  LockShard(header_->lock);
  owned_ = false;
  TakeFreedElsewhere();  // from now on every thread uses the stack, under the lock word
  UnlockShard(header_->lock);
}

// Dekker's half with a compiler barrier only: a freezer stores frozen_ and issues a process-wide
// barrier before it reads busy_, so either it sees this store or this load sees its store.
bool SlabShard::EnterAsOwner() {
  busy_.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (frozen_.load(std::memory_order_relaxed) == 0) return true;
  LeaveAsOwner();
  return false;
}

uint32_t SlabShard::InsertOwned(const BlockRecord& block) {
  if (EnterAsOwner()) {
    const uint32_t index = Insert(block);
    LeaveAsOwner();
    return index;
  }
  LockShard(header_->lock);  // frozen: after the freezer
  const uint32_t index = Insert(block);
  UnlockShard(header_->lock);
  return index;
}

bool SlabShard::RemoveOwned(uint32_t index, uint64_t address, BlockRecord* removed) {
  if (EnterAsOwner()) {
    const bool found = Remove(index, address, removed);
    LeaveAsOwner();
    return found;
  }
  LockShard(header_->lock);
  const bool found = Remove(index, address, removed);
  UnlockShard(header_->lock);
  return found;
}

uint32_t SlabShard::InsertBesideOwner(const BlockRecord& block) {
  LockShard(header_->lock);
  const uint32_t index = owned_ ? kNoSlot : Insert(block);
  UnlockShard(header_->lock);
  return index;
}

bool SlabShard::RemoveBesideOwner(uint32_t index, uint64_t address, BlockRecord* removed) {
  LockShard(header_->lock);
  const bool found =
      owned_ ? RemoveElsewhere(index, address, removed) : Remove(index, address, removed);
  UnlockShard(header_->lock);
  return found;
}

// The owner never writes a live slot, nor the freed_elsewhere_* counters; other removers are
// excluded by the lock word. The address goes first: from then on the slot reads as free.
bool SlabShard::RemoveElsewhere(uint32_t index, uint64_t address, BlockRecord* removed) {
  if (!Holds(index, address)) return false;
  HashSlot& slot = slots_[index];
  if (removed != nullptr) *removed = ToRecord(slot);
  const uint64_t size = slot.size();
  slot.address = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  slot.size_function = 0;
  slot.stack = 0;
  slot.seq = 0;
  ++header_->freed_elsewhere_count;
  header_->freed_elsewhere_bytes += size;
  uint32_t head = remote_head_.load(std::memory_order_relaxed);
  do {
    links_[index] = head;
  } while (!remote_head_.compare_exchange_weak(head, index + 1, std::memory_order_release,
                                               std::memory_order_relaxed));
  return true;
}

// The list's first slot (freed last) ends on top of the stack, as if the owner had freed them.
void SlabShard::TakeFreedElsewhere() {
  if (remote_head_.load(std::memory_order_relaxed) == 0) return;
  const uint32_t first = free_count_;
  uint32_t next = remote_head_.exchange(0, std::memory_order_acquire);
  for (; next != 0; next = links_[next - 1]) free_[free_count_++] = next - 1;
  std::reverse(free_ + first, free_ + free_count_);
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
  const uint64_t region = uint64_t{max_capacity_} * sizeof(HashSlot);
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
  } else if (free_count_ != 0 || (TakeFreedElsewhere(), free_count_ != 0)) {
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

void SlabShard::CountDropped() {
  LockShard(header_->lock);
  ++header_->dropped;
  UnlockShard(header_->lock);
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
