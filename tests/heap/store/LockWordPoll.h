// tests/heap/store: waiting, in a test, until a lock word shows what another thread or process did
// to it (a waiter that went to the futex leaves kContended). Shared by ShardLockTest and
// LockWaitTest.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace heapgraph::lock_word {

// Polls (up to a minute: a loaded machine) until `lock` reads `value`.
inline bool Reaches(const std::atomic<uint32_t>& lock, uint32_t value) {
  for (int i = 0; i < 60000; ++i) {
    if (lock.load() == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace heapgraph::lock_word
