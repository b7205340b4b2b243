#include "heap/lag/MonitoredThreads.h"

#include <time.h>
#include <unistd.h>

namespace heapgraph {
namespace {

MonitoredThread g_threads[MonitoredThreads::kMaxThreads];
thread_local int t_slot = -1;         // initial-exec (heap/ is compiled -ftls-model=initial-exec)
thread_local pid_t t_tid = 0;         // this thread's id, kept at its claim: gettid is a syscall
thread_local bool t_refused = false;  // the table was full at this thread's first call

uint64_t MonotonicNs() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

MonitoredThread& MonitoredThreads::At(uint32_t index) {
  return g_threads[index];
}

MonitoredThread* MonitoredThreads::CurrentIfClaimed() {
  int slot = t_slot;
  if (slot < 0) return nullptr;
  MonitoredThread& t = g_threads[slot];
  // A slot released after this thread's tid was reused by the watchdog's check is no longer ours.
  // The tid kept at the claim, not gettid(): two system calls per unit of work would be most of
  // an event loop adapter's cost (docs/performance.md). A forked child forgets it (AfterForkChild).
  return t.tid.load(std::memory_order_acquire) == t_tid ? &t : nullptr;
}

MonitoredThread* MonitoredThreads::Current(bool* claimed_now) {
  if (claimed_now != nullptr) *claimed_now = false;
  if (MonitoredThread* t = CurrentIfClaimed()) return t;
  if (t_refused) return nullptr;
  pid_t self = gettid();
  for (uint32_t i = 0; i < kMaxThreads; ++i) {
    pid_t expected = 0;
    MonitoredThread& t = g_threads[i];
    if (t.tid.load(std::memory_order_relaxed) != 0) continue;
    // Claimed (-self) before the reset, so that a thread losing the race for this slot never
    // resets it under its winner; published (self) after it: the watchdog reads a slot only once
    // its tid is positive.
    if (!t.tid.compare_exchange_strong(expected, -self, std::memory_order_acquire)) continue;
    t.begin_ns.store(0, std::memory_order_relaxed);
    t.unit.store(0, std::memory_order_relaxed);
    t.written.store(0, std::memory_order_relaxed);
    t.watched_unit.store(0, std::memory_order_relaxed);
    t.pending.store(0, std::memory_order_relaxed);
    t.depth = 0;
    t.tid.store(self, std::memory_order_release);
    t_slot = static_cast<int>(i);
    t_tid = self;
    if (claimed_now != nullptr) *claimed_now = true;
    return &t;
  }
  t_refused = true;
  return nullptr;
}

bool MonitoredThreads::BeginWork() {
  bool claimed = false;
  MonitoredThread* t = Current(&claimed);
  if (t == nullptr || t->depth++ != 0) return claimed;
  t->unit.fetch_add(1, std::memory_order_relaxed);
  t->begin_ns.store(MonotonicNs(), std::memory_order_release);
  return claimed;
}

void MonitoredThreads::EndWork() {
  MonitoredThread* t = CurrentIfClaimed();
  if (t == nullptr || t->depth == 0 || --t->depth != 0) return;
  uint64_t begin = t->begin_ns.load(std::memory_order_relaxed);
  uint64_t duration = MonotonicNs() - begin;
  uint64_t unit = t->unit.load(std::memory_order_relaxed);
  if (unit == t->watched_unit.load(std::memory_order_acquire)) {
    t->watched_duration_ns.store(duration, std::memory_order_release);
  }
  t->last_duration_ns.store(duration, std::memory_order_relaxed);
  t->ended_unit.store(unit, std::memory_order_release);
  t->begin_ns.store(0, std::memory_order_release);
}

void MonitoredThreads::Watch(MonitoredThread& slot, uint64_t unit) {
  slot.watched_duration_ns.store(0, std::memory_order_relaxed);
  slot.watched_unit.store(unit, std::memory_order_release);
}

uint64_t MonitoredThreads::WatchedDuration(const MonitoredThread& slot, uint64_t unit) {
  if (slot.watched_unit.load(std::memory_order_acquire) == unit) {
    uint64_t duration = slot.watched_duration_ns.load(std::memory_order_acquire);
    if (duration != 0) return duration;
  }
  // Watch() came after the unit ended, or the slot was watched again: the last unit, if it is.
  if (slot.ended_unit.load(std::memory_order_acquire) != unit) return 0;
  return slot.last_duration_ns.load(std::memory_order_relaxed);
}

void MonitoredThreads::Push(MonitoredThread& slot, uint32_t ring_size, uint32_t stack,
                            uintptr_t top) {
  uint64_t n = slot.written.load(std::memory_order_relaxed);
  LagSample& s = slot.ring[n % ring_size];
  s.unit.store(slot.unit.load(std::memory_order_relaxed), std::memory_order_relaxed);
  s.stack.store(stack, std::memory_order_relaxed);
  s.top.store(top, std::memory_order_relaxed);
  slot.written.store(n + 1, std::memory_order_release);
}

// Only what differs is written (a write copies the page the child shares with its parent).
void MonitoredThreads::AfterForkChild() {
  if (t_slot != -1) t_slot = -1;
  if (t_tid != 0) t_tid = 0;
  if (t_refused) t_refused = false;
}

void MonitoredThreads::Release(MonitoredThread& slot) {
  slot.tid.store(0, std::memory_order_release);
}

}  // namespace heapgraph
