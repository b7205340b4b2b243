#include "heap/store/HashShard.h"

#include <atomic>
#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

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
  for (uint64_t distance = 0;; ++distance) {
    const uint64_t a = slots[i].address;
    // Robin Hood order: a block nearer its home than `distance` means `address` is not here.
    if (a == address || a == 0 || Distance(a, i, capacity) < distance) {
      *index = i;
      return a == address;
    }
    i = i + 1 == capacity ? 0 : i + 1;  // terminates: the load stays below 1, an empty slot exists
  }
}

// Without the order test: cheaper per probe when `address` is almost surely present (a free).
bool HashShard::LookupLikelyPresent(uint64_t address, uint64_t* index) const {
  const HashSlot* const slots = slots_;
  const uint64_t capacity = header_->capacity;
  uint64_t i = Home(address, capacity);
  for (;;) {
    const uint64_t a = slots[i].address;
    if (a == address || a == 0) {
      *index = i;
      return a == address;
    }
    i = i + 1 == capacity ? 0 : i + 1;
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
  if (header_->capacity != 0 && Lookup(block.address, &i)) {
    Overwrite(i, block);
    return true;
  }
  if (OverMaxLoad(header_->live_count + 1)) {
    // Grow until the new block fits under the maximum load (one step, except near max_capacity).
    do {
      if (!Grow()) {
        ++header_->dropped;
        return false;
      }
    } while (OverMaxLoad(header_->live_count + 1));
    Lookup(block.address, &i);
  }
  InsertAt(i, block);
  return true;
}

void HashShard::Overwrite(uint64_t index, const BlockRecord& block) {
  SetWriting(static_cast<uint32_t>(index + 1));
  header_->live_bytes -= slots_[index].size();
  Put(index, block);
  header_->live_bytes += slots_[index].size();
  SetWriting(0);
}

// Makes room at `at` by moving the blocks of [at, the next empty slot) one slot forward, the last
// first, then writes the new block at `at`. Invariant at every step: `writing` names the slot
// being written, which is either the empty slot or a copy of its successor.
void HashShard::InsertAt(uint64_t at, const BlockRecord& block) {
  HashSlot* const slots = slots_;
  uint64_t j = at;
  while (slots[j].address != 0) j = Next(j);
  while (j != at) {
    const uint64_t from = Prev(j);
    SetWriting(static_cast<uint32_t>(j + 1));
    slots[j] = slots[from];
    j = from;
  }
  SetWriting(static_cast<uint32_t>(at + 1));
  ++header_->live_count;
  Put(at, block);
  header_->live_bytes += slots[at].size();
  SetWriting(0);
}

bool HashShard::Remove(uint64_t address, BlockRecord* removed) {
  uint64_t i;
  if (address == 0 || header_->capacity == 0 || !LookupLikelyPresent(address, &i)) return false;
  if (removed != nullptr) *removed = ToRecord(slots_[i]);
  SetWriting(static_cast<uint32_t>(i + 1));
  --header_->live_count;
  header_->live_bytes -= slots_[i].size();
  BackwardShift(i);
  SetWriting(0);
  return true;
}

// Closes the hole at `hole` (whose block is gone): the blocks after it up to the first empty slot
// or the first block at its home each move back one slot (Robin Hood order is kept: each was
// displaced, and no block after that run can use the hole). Invariant at every step: `writing`
// names the hole, the only slot that is not one distinct live block.
void HashShard::BackwardShift(uint64_t hole) {
  HashSlot* const slots = slots_;
  const uint64_t capacity = header_->capacity;
  for (;;) {
    const uint64_t j = hole + 1 == capacity ? 0 : hole + 1;
    const uint64_t a = slots[j].address;
    if (a == 0 || Home(a, capacity) == j) break;
    slots[hole] = slots[j];
    SetWriting(static_cast<uint32_t>(j + 1));
    hole = j;
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
namespace {

// Copies `count` slots through SSE registers only, never through glibc's memcpy: its AVX-512
// variants leave the last bytes copied (block addresses) in zmm16-31, which nothing of the
// recorder's clears (heap/platform/ScratchRegisters.h). The empty asm keeps the compiler from
// turning the loop back into a memcpy call.
void CopySlots(HashSlot* to, const HashSlot* from, uint64_t count) {
  auto* d = reinterpret_cast<char*>(to);
  const auto* s = reinterpret_cast<const char*>(from);
  const uint64_t bytes = count * sizeof(HashSlot);
  uint64_t i = 0;
#if defined(__x86_64__)
  for (; i + 16 <= bytes; i += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    asm volatile("" : : : "memory");
  }
#endif
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    memcpy(&word, s + i, 8);
    memcpy(d + i, &word, 8);
    asm volatile("" : : : "memory");
  }
}

}  // namespace

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
  CopySlots(scratch, slots_, old_capacity);
  SetWriting(format::kRehashing);
  header_->capacity = capacity;
  Rehash(scratch, old_capacity);
  SetWriting(0);
  scratch_->Release(old_capacity);
  return true;
}

// Clears the old table and reinserts every block of `old` into the (already larger) table in
// Robin Hood order (no marker per move: `writing` is kRehashing throughout).
void HashShard::Rehash(const HashSlot* old, uint64_t old_capacity) {
  memset(static_cast<void*>(slots_), 0, old_capacity * sizeof(HashSlot));
  const uint64_t capacity = header_->capacity;
  for (uint64_t k = 0; k < old_capacity; ++k) {
    if (old[k].address == 0) continue;
    HashSlot moving = old[k];
    uint64_t i = Home(moving.address, capacity);
    for (uint64_t distance = 0; slots_[i].address != 0; i = Next(i), ++distance) {
      const uint64_t resident = Distance(slots_[i].address, i, capacity);
      if (resident < distance) {  // the nearer block yields its slot and moves on
        std::swap(moving, slots_[i]);
        distance = resident;
      }
    }
    slots_[i] = moving;
  }
}

}  // namespace heapgraph
