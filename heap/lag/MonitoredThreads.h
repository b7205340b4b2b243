// heap/lag/: the table of monitored threads (heapgraph_work_begin/end), fixed at kMaxThreads
// slots, no allocation, no lock: a thread claims a slot with one CAS at its first call and keeps
// it (cached in initial-exec TLS with its tid, so that a unit of work makes no system call but
// the clock's vDSO read) until the watchdog finds it gone. Each slot holds what the
// watchdog reads: the start of the running unit of work (0 = none), the unit's number, the end
// of the last unit, and the ring of stack samples the sampling signal's handler fills on the
// thread itself. Writers: the owning thread (units, and the ring from its signal handler); the
// watchdog reads, names the unit it reported (Watch) and releases. May include heap/platform and
// heap/store.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

struct LagSample {
  std::atomic<uint64_t> unit{0};   // the unit of work it was taken in
  std::atomic<uint32_t> stack{0};  // stacks.bin id
  std::atomic<uintptr_t> top{0};   // the interrupted frame: the grouping key
};

struct MonitoredThread {
  std::atomic<pid_t> tid{0};                  // 0: free; -tid: being claimed by tid
  std::atomic<uint64_t> begin_ns{0};          // CLOCK_MONOTONIC start of the running unit; 0: idle
  std::atomic<uint64_t> unit{0};              // number of the running (or last) unit, from 1
  std::atomic<uint64_t> last_duration_ns{0};  // of the last finished unit
  std::atomic<uint64_t> ended_unit{0};        // its number
  // The unit the watchdog reported as a lag (written by the watchdog), and that unit's whole run
  // time, stored by the thread when it ends (0: not yet): the end record's duration even when
  // many short units followed it before the next check.
  std::atomic<uint64_t> watched_unit{0};
  std::atomic<uint64_t> watched_duration_ns{0};
  std::atomic<uint32_t> pending{0};  // 1: a sampling signal was sent, not yet answered
  std::atomic<uint64_t> written{0};  // samples pushed so far (ring index = written % size)
  uint32_t depth = 0;                // nesting of begin/end; owner thread only
  LagSample ring[format::kMaxLagSamples];
};

namespace MonitoredThreads {

inline constexpr uint32_t kMaxThreads = 16;

// The calling thread's slot, claimed at its first call; null when the table is full.
// `claimed_now` says whether this call claimed it.
MonitoredThread* Current(bool* claimed_now = nullptr);
// The slot of the calling thread if it already has one (the signal handler), else null.
MonitoredThread* CurrentIfClaimed();
MonitoredThread& At(uint32_t index);

// heapgraph_work_begin/end of the calling thread. BeginWork returns true when it claimed the
// thread's slot (its first call). Nested pairs count as one unit; an unmatched end is ignored.
bool BeginWork();
void EndWork();

// Appends a sample to `slot`'s ring (its own thread, from the sampling handler); keeps the last
// `ring_size` (<= kMaxLagSamples).
void Push(MonitoredThread& slot, uint32_t ring_size, uint32_t stack, uintptr_t top);

// The watchdog, when it reports `unit` as a lag: the thread keeps that unit's run time when it
// ends (WatchedDuration).
void Watch(MonitoredThread& slot, uint64_t unit);
// The whole run time of the watched unit `unit`, if it has ended and its thread kept it; else
// the last unit's when that is `unit`; else 0 (lost).
uint64_t WatchedDuration(const MonitoredThread& slot, uint64_t unit);

// fork(), child side (the recorder's pthread_atfork handler, on the one thread the child has):
// the thread forgets its slot and tid, both the parent's; its next call claims a slot anew.
void AfterForkChild();

// The watchdog, when the slot's thread is gone: frees it for another thread.
void Release(MonitoredThread& slot);

}  // namespace MonitoredThreads

}  // namespace heapgraph
