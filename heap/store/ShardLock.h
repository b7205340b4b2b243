// heap/store/: the lock every tree shard keeps in its on-disk header. A short wait spins (64
// pauses: another thread's operation on the shard takes well under a microsecond); a long one
// (a leak check holds every shard for its snapshot or its marking) sleeps on a futex until the
// holder unlocks, rather than spinning through sched_yield: ten threads yielding in a loop took
// the CPU from the check that they were waiting for (bench/repeated_checks.cc). The word is 0
// (free), 1 (held) or 2 (held, and a thread may be asleep on it: the unlock wakes one); Ulrich
// Drepper's "Futexes Are Tricky", mutex 3. The futex is not process-private: the shard header
// lies in a MAP_SHARED file mapping. A wait that goes past the spin is timed (heap/store/LockWait:
// the longest wait during a leak check is in its report). Raw system calls only, never allocates:
// usable inside malloc hooks and signal handlers.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "heap/store/LockWait.h"

namespace heapgraph {

inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

namespace shard_lock {
inline constexpr uint32_t kFree = 0;
inline constexpr uint32_t kHeld = 1;
inline constexpr uint32_t kContended = 2;  // held, with a sleeper possible
inline constexpr unsigned kSpins = 64;

inline void Futex(std::atomic<uint32_t>& word, int op, uint32_t value) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}
}  // namespace shard_lock

inline void LockShard(std::atomic<uint32_t>& lock) {
  using namespace shard_lock;
  uint32_t seen = kFree;
  if (lock.compare_exchange_strong(seen, kHeld, std::memory_order_acquire)) return;
  for (unsigned spins = 0; spins < kSpins; ++spins) {
    CpuRelax();
    seen = kFree;
    if (lock.load(std::memory_order_relaxed) == kFree &&
        lock.compare_exchange_strong(seen, kHeld, std::memory_order_acquire)) {
      return;
    }
  }
  // From here on the lock is taken as kContended: a sleeper may exist until the last one leaves.
  const uint64_t began = LockWait::Begin();
  while (lock.exchange(kContended, std::memory_order_acquire) != kFree) {
    Futex(lock, FUTEX_WAIT, kContended);  // returns at once if the word is no longer kContended
  }
  LockWait::End(began);
}

inline void UnlockShard(std::atomic<uint32_t>& lock) {
  using namespace shard_lock;
  if (lock.exchange(kFree, std::memory_order_release) == kContended) Futex(lock, FUTEX_WAKE, 1);
}

}  // namespace heapgraph
