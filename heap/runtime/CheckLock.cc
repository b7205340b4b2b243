#include "heap/runtime/CheckLock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace heapgraph::CheckLock {
namespace {

// A ticket lock: first come, first served. A plain mutex let a thread that checks in a loop take
// the lock back before a waiting fork() woke, and the fork waited forever (issue 12, item 8).
std::atomic<uint32_t> g_next{0};     // the ticket the next caller draws
std::atomic<uint32_t> g_serving{0};  // the ticket that holds the lock
std::atomic<long> g_owner{0};        // the kernel tid holding the lock, 0 when free
bool g_taken_for_fork = false;       // written by the forking thread only, while it holds the lock
HeapgraphCheckEntrant g_entrants[kEntrantSlots] = {};

// This thread holds a ticket it has not been served yet: a signal handler that interrupted the
// wait must not draw another, which would wait for the interrupted one forever.
__thread bool t_waiting __attribute__((tls_model("initial-exec"))) = false;

long Tid() {
  return syscall(SYS_gettid);
}

void Wait(uint32_t seen) {
  syscall(SYS_futex, &g_serving, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}

void WakeAll() {
  syscall(SYS_futex, &g_serving, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Lists `self` with the program's frame; nothing when every slot is taken. The slot is claimed
// with -self first: a reader (the stopped world's scan) takes only positive tids, whose stack
// pointer is already stored.
void Enter(long self, uint64_t program_stack_pointer) {
  if (program_stack_pointer == 0) return;
  for (HeapgraphCheckEntrant& slot : g_entrants) {
    int64_t free_slot = 0;
    if (__atomic_compare_exchange_n(&slot.tid, &free_slot, -self, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      __atomic_store_n(&slot.stack_pointer, program_stack_pointer, __ATOMIC_RELAXED);
      __atomic_store_n(&slot.tid, self, __ATOMIC_RELEASE);
      return;
    }
  }
}

void Leave(long self) {
  for (HeapgraphCheckEntrant& slot : g_entrants) {
    if (__atomic_load_n(&slot.tid, __ATOMIC_RELAXED) == self) {
      __atomic_store_n(&slot.tid, 0, __ATOMIC_RELEASE);
    }
  }
}

}  // namespace

const HeapgraphCheckEntrant* Entrants() {
  return g_entrants;
}

bool Acquire(uint64_t program_stack_pointer) {
  const long self = Tid();
  if (t_waiting || g_owner.load(std::memory_order_acquire) == self) return false;
  t_waiting = true;
  Enter(self, program_stack_pointer);
  const uint32_t ticket = g_next.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t serving = g_serving.load(std::memory_order_acquire); serving != ticket;
       serving = g_serving.load(std::memory_order_acquire)) {
    Wait(serving);
  }
  g_owner.store(self, std::memory_order_release);
  t_waiting = false;
  return true;
}

void Release() {
  Leave(Tid());
  g_owner.store(0, std::memory_order_release);
  g_serving.fetch_add(1, std::memory_order_release);
  WakeAll();
}

void BeforeFork() {
  g_taken_for_fork = Acquire(0);  // false: this thread is inside a check (a handler forked)
}

void AfterForkParent() {
  if (g_taken_for_fork) Release();
  g_taken_for_fork = false;
}

void AfterForkChild() {
  // The child has only the forking thread: the tickets other threads drew died with them, and
  // so did their entries.
  for (HeapgraphCheckEntrant& slot : g_entrants) slot.tid = 0;
  if (g_taken_for_fork) {
    g_owner.store(0, std::memory_order_relaxed);  // the lock starts free
    g_next.store(g_serving.load(std::memory_order_relaxed), std::memory_order_relaxed);
  } else {
    g_owner.store(Tid(), std::memory_order_relaxed);  // the check this thread is inside goes on
    g_next.store(g_serving.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  g_taken_for_fork = false;
}

}  // namespace heapgraph::CheckLock
