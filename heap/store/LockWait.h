// heap/store/: how long a thread waited for a recorder lock (a tree shard's, the rehash scratch's,
// the module map's) while a leak check held it: the pause a program's allocating thread feels,
// which the check cannot see from its own side (a woken thread may run long after the unlock).
// A check opens a window (LockWaitWindow) before it takes the recorder's locks; every wait that
// went past the lock's short spin is timed by the waiting thread itself (CLOCK_MONOTONIC, a vDSO
// call) and the longest part of any wait that lies inside the window is kept in an atomic
// maximum, which the check reads after it has released the world and every lock. Only the slow
// path is timed; the fast path costs nothing. Never allocates: usable inside malloc hooks.
// One window per library that links the store (libheapgraph.so's is the one its hooks fill; the
// check finds it through HeapgraphRecorderView::lock_waits).
#pragma once

#include <atomic>
#include <cstdint>

namespace heapgraph {

struct LockWaitWindow {
  std::atomic<uint64_t> opened_ns{0};   // CLOCK_MONOTONIC when the check opened it; 0: never
  std::atomic<uint64_t> longest_ns{0};  // the longest wait (its part since opened_ns)
  std::atomic<uint32_t> waiting{0};     // threads inside a timed wait now
};

namespace LockWait {

// This library's window (the one LockShard and ModuleMap::Lock fill).
LockWaitWindow& Window();

// CLOCK_MONOTONIC in nanoseconds.
uint64_t NowNs();

// Around a wait's slow part: Begin returns its start (and counts the waiter); End keeps the
// wait's part inside the window if it is the longest yet.
uint64_t Begin();
void End(uint64_t began_ns);

// The check's side: Open resets `window` (before the recorder's locks are taken); Longest waits
// (at most `settle_ms`) until no thread is inside a timed wait, so that a thread woken by the
// unlock but not yet scheduled is counted, then returns the longest wait in milliseconds.
void Open(LockWaitWindow& window);
double Longest(LockWaitWindow& window, unsigned settle_ms);

}  // namespace LockWait

}  // namespace heapgraph
