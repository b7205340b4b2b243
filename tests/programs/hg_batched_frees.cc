// tests/programs: frees the recorder applies in per-thread batches (option batch_frees,
// heap/runtime/DeferredFrees.h), linked with libheapgraph.so. Modes (argv[1]):
//   queued   a worker thread allocates 8 blocks of 48 bytes ("freed <address>"), one of 8 KiB
//            and one of 1 MiB ("big <address>"), frees them all and waits; the main thread runs
//            __lsan_do_recoverable_leak_check and prints "leaks=N", then "ready"; the worker ends
//            when stdin closes
//   exit     the worker frees its 8 blocks and exits; the main thread joins it, then "ready"
//   fork     as queued, then the main thread forks while the worker waits; the child writes its
//            recording directory, runs the check and prints "child <pid> leaks=N" before _exit(0);
//            the parent reaps it, then "ready"
//   signals  the main thread frees 48-byte blocks while a 100 µs timer's handler mallocs and
//            frees a 40-byte block on the same thread; "handled N", then "ready"
// The worker's blocks are allocated and freed in a function that returns, its dead frames
// scrubbed, so that no word the program keeps points to them.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

extern "C" int __lsan_do_recoverable_leak_check(void);

namespace {

constexpr int kFreed = 8;  // fewer than a batch (16): they stay queued

int g_release[2];
std::atomic<int> g_worker_done{0};

extern "C" __attribute__((noinline)) void AllocateAndFree(bool big) {
  void* blocks[kFreed];
  for (void*& block : blocks) {
    block = malloc(48);
    memset(block, 0x22, 48);
  }
  for (void* block : blocks) hgprog::PrintAddress("freed", block);
  for (void* block : blocks) free(block);
  if (big) {
    for (size_t size : {size_t{8192}, size_t{1} << 20}) {
      void* block = malloc(size);
      memset(block, 0x33, size);
      hgprog::PrintAddress("big", block);
      free(block);
    }
  }
  explicit_bzero(blocks, sizeof(blocks));
}

void* Worker(void* waits) {
  AllocateAndFree(waits != nullptr);
  hgprog::ScrubStack();
  g_worker_done.store(1);
  if (waits != nullptr) {
    char c;
    while (read(g_release[0], &c, 1) < 0) {
    }
  }
  return nullptr;
}

void AwaitWorker() {
  while (g_worker_done.load() == 0) usleep(1000);
}

void ForkAndCheck() {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    (void)heapgraph_recording_dir();  // the child's own directory, written now
    int leaks = __lsan_do_recoverable_leak_check();
    printf("child %d leaks=%d\n", static_cast<int>(getpid()), leaks);
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

std::atomic<long> g_handled{0};

void OnTimer(int) {
  void* p = malloc(40);
  memset(p, 0x44, 40);
  free(p);
  g_handled.fetch_add(1, std::memory_order_relaxed);
}

// glibc's malloc is not async-signal-safe: the handler only runs while the main thread frees
// (48-byte chunks go to glibc's per-thread cache or fast bins, which take no lock), never while
// it allocates.
void ChurnUnderSignals() {
  struct sigaction action = {};
  action.sa_handler = OnTimer;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, nullptr);
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  struct itimerval timer = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &timer, nullptr);
  void* slots[64];
  for (int round = 0; round < 20000; ++round) {
    sigprocmask(SIG_BLOCK, &alarm, nullptr);
    for (void*& slot : slots) slot = malloc(48);
    sigprocmask(SIG_UNBLOCK, &alarm, nullptr);
    for (void* slot : slots) free(slot);
  }
  struct itimerval off = {};
  setitimer(ITIMER_REAL, &off, nullptr);
  printf("handled %ld\n", g_handled.load());
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  const char* mode = argc > 1 ? argv[1] : "queued";
  if (strcmp(mode, "signals") == 0) {
    ChurnUnderSignals();
    hgprog::Ready();
    hgprog::WaitForStdinEof();
    return 0;
  }
  const bool waits = strcmp(mode, "exit") != 0;
  if (pipe(g_release) != 0) return 2;
  pthread_t worker;
  if (pthread_create(&worker, nullptr, Worker, waits ? &g_release : nullptr) != 0) return 2;
  if (!waits) pthread_join(worker, nullptr);
  AwaitWorker();
  if (strcmp(mode, "queued") == 0) {
    printf("leaks=%d\n", __lsan_do_recoverable_leak_check());
  } else if (strcmp(mode, "fork") == 0) {
    ForkAndCheck();
  }
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  if (waits) {
    (void)!write(g_release[1], "x", 1);
    pthread_join(worker, nullptr);
  }
  return 0;
}
