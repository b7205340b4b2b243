// heap/store/: how long a thread waited for a recorder lock (a tree shard's, the rehash scratch's,
// the module map's) while a leak check held it: the pause a program's allocating thread feels,
// which the check cannot see from its own side (a woken thread may run long after the unlock).
// A check opens a window (LockWaitWindow) before it takes the recorder's locks; every wait that
// went past the lock's short spin is timed by the waiting thread itself (CLOCK_MONOTONIC, a vDSO
// call) and the longest part of any wait that lies inside the window is kept in an atomic
// maximum, which the check reads after it has released the world and every lock. The check closes
// the window at its unlock: a wait that begins after the close is the program's own contention,
// neither counted nor waited for (with ten threads churning, some thread was always inside such a
// wait, and the check slept its whole settle time, 50 ms, after every check). Only the slow path
// is timed; the fast path costs nothing. Never allocates: usable inside malloc hooks.
// One window per library that links the store (libheapgraph.so's is the one its hooks fill; the
// check finds it through HeapgraphRecorderView::lock_waits).
#pragma once

#include <atomic>
#include <cstdint>

namespace heapgraph {

struct LockWaitWindow {
  std::atomic<uint64_t> opened_ns{0};   // CLOCK_MONOTONIC when the check opened it; 0: never
  std::atomic<uint64_t> closed_ns{0};   // when the check closed it (its unlock); 0: still open
  std::atomic<uint64_t> longest_ns{0};  // the longest wait begun before closed_ns (since opened_ns)
  std::atomic<uint32_t> waiting{0};     // threads inside a timed wait now
  // Of those inside a wait at the close, how many have not ended it yet (a race at the close may
  // leave it one too high, then Longest waits its settle time, or one too low: <= 0 is none).
  std::atomic<int32_t> pending_at_close{0};
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

// The check's side: Open resets `window` (before the recorder's locks are taken); Close ends it
// (right after the unlock: later waits are not the check's); Longest closes it if still open, then
// waits (at most `settle_ms`) until every wait begun before the close has ended, so that a thread
// woken by the unlock but not yet scheduled is counted, and returns the longest wait in
// milliseconds.
void Open(LockWaitWindow& window);
void Close(LockWaitWindow& window);
double Longest(LockWaitWindow& window, unsigned settle_ms);

}  // namespace LockWait

}  // namespace heapgraph
