#include "heap/store/LockWait.h"

#include <sched.h>
#include <time.h>

namespace heapgraph {

namespace {
LockWaitWindow g_window;
}  // namespace

namespace LockWait {

LockWaitWindow& Window() {
  return g_window;
}

uint64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

uint64_t Begin() {
  g_window.waiting.fetch_add(1, std::memory_order_relaxed);
  return NowNs();
}

void End(uint64_t began_ns) {
  uint64_t now = NowNs();
  // Only the part of the wait since the window opened: a wait that began before the check is
  // bounded by the check's own duration all the same.
  uint64_t opened = g_window.opened_ns.load(std::memory_order_relaxed);
  uint64_t from = began_ns > opened ? began_ns : opened;
  if (opened != 0 && now > from) {
    uint64_t wait = now - from;
    uint64_t longest = g_window.longest_ns.load(std::memory_order_relaxed);
    while (wait > longest &&
           !g_window.longest_ns.compare_exchange_weak(longest, wait, std::memory_order_relaxed)) {
    }
  }
  g_window.waiting.fetch_sub(1, std::memory_order_release);
}

void Open(LockWaitWindow& window) {
  window.longest_ns.store(0, std::memory_order_relaxed);
  window.opened_ns.store(NowNs(), std::memory_order_relaxed);
}

double Longest(LockWaitWindow& window, unsigned settle_ms) {
  uint64_t deadline = NowNs() + uint64_t{settle_ms} * 1000000ull;
  while (window.waiting.load(std::memory_order_acquire) != 0 && NowNs() < deadline) {
    timespec pause = {0, 200000};  // 0.2 ms: let a woken waiter run and finish its End
    nanosleep(&pause, nullptr);
  }
  return static_cast<double>(window.longest_ns.load(std::memory_order_relaxed)) / 1e6;
}

}  // namespace LockWait

}  // namespace heapgraph
