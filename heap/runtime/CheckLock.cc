#include "heap/runtime/CheckLock.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace heapgraph::CheckLock {
namespace {

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
std::atomic<long> g_owner{0};   // the kernel tid holding g_mutex, 0 when free
bool g_taken_for_fork = false;  // written by the forking thread only, while it holds g_mutex

long Tid() {
  return syscall(SYS_gettid);
}

}  // namespace

bool Acquire() {
  const long self = Tid();
  if (g_owner.load(std::memory_order_acquire) == self) return false;
  pthread_mutex_lock(&g_mutex);
  g_owner.store(self, std::memory_order_release);
  return true;
}

void Release() {
  g_owner.store(0, std::memory_order_release);
  pthread_mutex_unlock(&g_mutex);
}

void BeforeFork() {
  g_taken_for_fork = Acquire();  // false: this thread is inside a check (a handler forked)
}

void AfterForkParent() {
  if (g_taken_for_fork) Release();
  g_taken_for_fork = false;
}

void AfterForkChild() {
  if (g_taken_for_fork) {
    // The parent's mutex word was copied locked by this thread: start free.
    g_mutex = PTHREAD_MUTEX_INITIALIZER;
    g_owner.store(0, std::memory_order_relaxed);
  } else {
    g_owner.store(Tid(), std::memory_order_relaxed);  // the check this thread is inside goes on
  }
  g_taken_for_fork = false;
}

}  // namespace heapgraph::CheckLock
