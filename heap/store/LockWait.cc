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
  // Counted before the clock is read: a wait begun before a Close is in its pending count.
  g_window.waiting.fetch_add(1, std::memory_order_seq_cst);
  return NowNs();
}

void End(uint64_t began_ns) {
  uint64_t now = NowNs();
  // Only the part of the wait since the window opened: a wait that began before the check is
  // bounded by the check's own duration all the same. A wait begun after the close is not the
  // check's.
  uint64_t opened = g_window.opened_ns.load(std::memory_order_relaxed);
  uint64_t closed = g_window.closed_ns.load(std::memory_order_seq_cst);
  bool before_close = closed == 0 || began_ns < closed;
  uint64_t from = began_ns > opened ? began_ns : opened;
  if (opened != 0 && before_close && now > from) {
    uint64_t wait = now - from;
    uint64_t longest = g_window.longest_ns.load(std::memory_order_relaxed);
    while (wait > longest &&
           !g_window.longest_ns.compare_exchange_weak(longest, wait, std::memory_order_relaxed)) {
    }
  }
  if (closed != 0 && began_ns < closed) {
    g_window.pending_at_close.fetch_sub(1, std::memory_order_release);
  }
  g_window.waiting.fetch_sub(1, std::memory_order_seq_cst);
}

void Open(LockWaitWindow& window) {
  window.longest_ns.store(0, std::memory_order_relaxed);
  window.closed_ns.store(0, std::memory_order_seq_cst);
  window.opened_ns.store(NowNs(), std::memory_order_relaxed);
}

void Close(LockWaitWindow& window) {
  if (window.closed_ns.load(std::memory_order_relaxed) != 0) return;
  window.closed_ns.store(NowNs(), std::memory_order_seq_cst);
  // Every wait begun before that time has been counted in `waiting` by now (Begin counts, then
  // reads the clock); those that end from here on count themselves off.
  window.pending_at_close.store(
      static_cast<int32_t>(window.waiting.load(std::memory_order_seq_cst)),
      std::memory_order_seq_cst);
}

double Longest(LockWaitWindow& window, unsigned settle_ms) {
  Close(window);
  uint64_t deadline = NowNs() + uint64_t{settle_ms} * 1000000ull;
  while (window.pending_at_close.load(std::memory_order_acquire) > 0 && NowNs() < deadline) {
    timespec pause = {0, 200000};  // 0.2 ms: let a woken waiter run and finish its End
    nanosleep(&pause, nullptr);
  }
  return static_cast<double>(window.longest_ns.load(std::memory_order_relaxed)) / 1e6;
}

}  // namespace LockWait

}  // namespace heapgraph
