// tests/programs: fork from a multi-threaded process. The main thread allocates ten known blocks
// (prefork <address> <size>), starts 4 threads that allocate continuously, then forks 20 children
// at once. Each child allocates its own block of 7700 + i bytes, churns a little, frees the first
// known block and exits 0, after writing "forked <pid> <address> <size>". The parent reaps every
// child within a deadline ("child <pid> <wait status>", status -1 = killed after the deadline),
// stops its threads, prints "range ChildAllocate <begin> <end>" and "ready", and waits for stdin to
// close.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "ProgramSupport.h"

namespace {

constexpr unsigned kKnown = 10;
constexpr unsigned kThreads = 4;
constexpr unsigned kChildren = 20;
constexpr int kDeadlineSeconds = 60;

void* g_known[kKnown];
std::atomic<bool> g_stop{false};

void* Allocating(void* raw) {
  void* slots[64] = {};
  hgprog::Random random(reinterpret_cast<uintptr_t>(raw));
  while (!g_stop.load(std::memory_order_relaxed)) {
    uint64_t r = random.Next();
    void*& slot = slots[r % 64];
    free(slot);
    slot = malloc(1 + (r >> 20) % 1024);
  }
  for (void* p : slots) free(p);
  return nullptr;
}

}  // namespace

extern "C" __attribute__((noinline)) void* ChildAllocate(size_t size) {
  void* p = malloc(size);
  hgprog::Keep(p);
  return p;
}

namespace {

[[noreturn]] void ChildMain(unsigned index) {
  size_t size = 7700 + index;
  void* own = ChildAllocate(size);
  for (int i = 0; i < 100; ++i) {
    void* p = malloc(16 + i);
    hgprog::Keep(p);
    free(p);
  }
  free(g_known[0]);
  char line[128];
  int n = snprintf(line, sizeof(line), "forked %d %#jx %zu\n", static_cast<int>(getpid()),
                   static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(own)), size);
  if (write(1, line, static_cast<size_t>(n)) != n) _exit(3);
  exit(0);
}

// Waits for `pid` until `deadline` (CLOCK_MONOTONIC seconds); kills it when the deadline passes.
int Reap(pid_t pid, time_t deadline) {
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(1000);
  }
}

// Forks every child at once, then reaps them all ("child <pid> <wait status>").
void ForkAndReapChildren() {
  fflush(stdout);
  pid_t children[kChildren];
  for (unsigned i = 0; i < kChildren; ++i) {
    children[i] = fork();
    if (children[i] == 0) ChildMain(i);
  }
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (pid_t pid : children) {
    int status = pid < 0 ? -1 : Reap(pid, start.tv_sec + kDeadlineSeconds);
    printf("child %d %d\n", static_cast<int>(pid), status);
  }
}

}  // namespace

int main() {
  hgprog::LineBufferedStdout();
  for (unsigned i = 0; i < kKnown; ++i) {
    g_known[i] = malloc(3000 + i);
    printf("prefork %#jx %u\n", static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(g_known[i])),
           3000 + i);
  }
  pthread_t ids[kThreads];
  for (uintptr_t t = 0; t < kThreads; ++t) {
    pthread_create(&ids[t], nullptr, Allocating, reinterpret_cast<void*>(t + 1));
  }
  usleep(20000);  // let the threads get going
  ForkAndReapChildren();
  g_stop.store(true);
  for (pthread_t id : ids) pthread_join(id, nullptr);
  hgprog::PrintRange("ChildAllocate", reinterpret_cast<const void*>(&ChildAllocate));
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
