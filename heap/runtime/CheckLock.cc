#include "heap/runtime/CheckLock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

#include "heap/runtime/CheckEntrants.h"

namespace heapgraph::CheckLock {
namespace {

// A ticket lock: first come, first served. A plain mutex let a thread that checks in a loop take
// the lock back before a waiting fork() woke, and the fork waited forever (issue 12, item 8).
std::atomic<uint32_t> g_next{0};     // the ticket the next caller draws
std::atomic<uint32_t> g_serving{0};  // the ticket that holds the lock
std::atomic<long> g_owner{0};        // the kernel tid holding the lock, 0 when free
bool g_taken_for_fork = false;       // written by the forking thread only, while it holds the lock

// This thread holds a ticket it has not been served yet: a signal handler that interrupted the
// wait must not draw another, which would wait for the interrupted one forever.
__thread bool t_waiting __attribute__((tls_model("initial-exec"))) = false;
// This thread's Acquire listed it (CheckEntrants): no outer call had.
__thread bool t_listed_here __attribute__((tls_model("initial-exec"))) = false;

long Tid() {
  return syscall(SYS_gettid);
}

void Wait(uint32_t seen) {
  syscall(SYS_futex, &g_serving, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}

void WakeAll() {
  syscall(SYS_futex, &g_serving, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

bool Acquire(uint64_t program_stack_pointer) {
  const long self = Tid();
  if (t_waiting || g_owner.load(std::memory_order_acquire) == self) return false;
  t_waiting = true;
  t_listed_here = CheckEntrants::List(program_stack_pointer);
  const uint32_t ticket = g_next.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t serving = g_serving.load(std::memory_order_acquire); serving != ticket;
       serving = g_serving.load(std::memory_order_acquire)) {
    Wait(serving);
  }
  g_owner.store(self, std::memory_order_release);
  t_waiting = false;
  return true;
}

// Unlisted only after the wake: the check it wakes may stop this thread before it returns, and
// the frames below its listed one are still heapgraph's.
void Release() {
  g_owner.store(0, std::memory_order_release);
  g_serving.fetch_add(1, std::memory_order_release);
  WakeAll();
  if (t_listed_here) CheckEntrants::Unlist();
  t_listed_here = false;
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
  // so did their listings.
  CheckEntrants::AfterForkChild();
  if (t_listed_here) t_listed_here = false;  // a write would copy a page shared with the parent
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
