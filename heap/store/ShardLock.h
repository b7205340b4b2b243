// heap/store/: the spin lock every tree shard keeps in its on-disk header: exchange, 64 pause
// spins, then sched_yield. Never allocates; usable inside malloc hooks.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>

namespace heapgraph {

inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline void LockShard(std::atomic<uint32_t>& lock) {
  unsigned spins = 0;
  while (lock.exchange(1, std::memory_order_acquire) != 0) {
    while (lock.load(std::memory_order_relaxed) != 0) {
      if (++spins < 64) {
        CpuRelax();
      } else {
        sched_yield();
      }
    }
  }
}

inline void UnlockShard(std::atomic<uint32_t>& lock) {
  lock.store(0, std::memory_order_release);
}

}  // namespace heapgraph
