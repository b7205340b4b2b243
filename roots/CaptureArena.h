// roots/: storage for one stop-the-world result, mapped before the world stops so that nothing
// allocates while it is stopped (a stopped thread may hold the malloc lock).
//
// One anonymous private mapping holds `capacity` ThreadInfo slots followed by one vector-state
// buffer per slot, each 64-byte aligned (XSAVE requires it) and `vector_size` bytes long. The
// mapping is MAP_NORESERVE: untouched slots cost address space only. Slots are filled by whoever
// captures (the ptrace helper task, signal handlers, the calling thread) with Claim(); Threads()
// publishes slots [0, count()).
//
// There is no fixed thread limit: a capture sizes its arena (and its listing buffers) before each
// stop with SlotsFor(the live thread count), and when a stop meets more threads than that (they
// were started in between), it releases the world, grows to GrownSlots() and stops again.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "roots/ThreadInfo.h"

namespace heapgraph::roots {

class CaptureArena {
 public:
  // Slots for a stop of a process that has `threads` threads now (the caller included): room for
  // threads started before the stop completes. `threads` < 0 (the count was unreadable): a guess
  // that the retry corrects.
  static size_t SlotsFor(long threads);
  // Slots for the next attempt after a stop ran out of `previous` slots: at least twice as many,
  // and SlotsFor(`threads`, counted again).
  static size_t GrownSlots(size_t previous, long threads);
  // Stops retried with more slots before giving up (threads kept being started faster than the
  // slots grew, each retry at least doubling them).
  static constexpr int kMaxRegrowths = 8;

  CaptureArena() = default;
  ~CaptureArena();
  CaptureArena(const CaptureArena&) = delete;
  CaptureArena& operator=(const CaptureArena&) = delete;

  // Maps room for `capacity` slots with `vector_size`-byte buffers; keeps an existing mapping
  // that is large enough. Resets count() to 0. False if mmap fails.
  bool Reserve(size_t capacity, size_t vector_size);
  // Forgets all slots (count() = 0) without unmapping.
  void Clear() { count_.store(0, std::memory_order_relaxed); }

  // Takes the next free slot, value-initialized, or nullptr when all `capacity` are taken.
  // Lock-free and allocation-free: callable from signal handlers and the helper task.
  ThreadInfo* Claim();
  // The vector buffer that belongs to `slot` (a pointer Claim() returned).
  std::span<uint8_t> VectorBuffer(const ThreadInfo* slot);

  std::span<const ThreadInfo> Threads() const { return {slots_, count()}; }
  size_t count() const;
  // True when some Claim() found no free slot.
  bool overflowed() const { return count_.load(std::memory_order_acquire) > capacity_; }
  size_t capacity() const { return capacity_; }
  size_t vector_size() const { return vector_size_; }

 private:
  void Unmap();

  void* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  ThreadInfo* slots_ = nullptr;
  uint8_t* vectors_ = nullptr;
  size_t capacity_ = 0;
  size_t vector_size_ = 0;
  // Claimed slots; may run past capacity_ when Claim() fails, so count() clamps it.
  std::atomic<size_t> count_{0};
};

}  // namespace heapgraph::roots
