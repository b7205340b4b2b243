// tests/programs: the leak check's long stress scenarios (tests/stress/run.sh), in a real process
// linked with libheapgraph.so and libheapgraph_scan.so (the C API).
//
//   stress_checks churn N     N checks while 2 threads churn the heap (malloc/free/realloc) and
//                             a third starts and joins short threads; one block leaked before
//                             each check
//   stress_checks overlap N   N rounds of overlapping checks: two threads check at once while
//                             the main thread sends the scan signal (a check on heapgraph's tool
//                             thread; not with scan_signal=0) and forks a child that checks too;
//                             the leaks are planted before the first round
//
// A check is exact when it ran and reported the planted direct leaks on top of those of a check
// made before anything was planted (the baseline: the program's own, none expected). Prints
// "baseline direct=<n>", then one line per try: "try <i> ok[ total_ms=<n> world_stopped_ms=<n>]"
// (the times for churn) or "try <i> failed <why>". The
// script counts the lines: a try that never printed (a hang, a crash) is a failed one. A forked
// child that has not exited after 30 s is killed and its try failed. Exit 0 once every try ran,
// 64 on a bad argument.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

constexpr size_t kLeakSize = 4242;
// As many as the CPUs of the machine the figures come from: more only starve the check.
constexpr unsigned kChurnThreads = 2;
constexpr unsigned kChurnSlots = 1000;
constexpr int kOverlapLeaks = 5;
constexpr int kScanSignal = 39;  // the default scan_signal (SIGRTMIN + 5 with glibc)
constexpr int kChildTimeoutMs = 30000;

std::atomic<bool> g_stop{false};
unsigned long long g_baseline = 0;

// One check; true when it ran and found `planted` direct leaks beyond the baseline. `why` (320
// bytes) says why not, or the check's times.
bool ExactCheck(unsigned long long planted, char* why) {
  heapgraph_leak_summary s = {};
  const int n = heapgraph_check_leaks(nullptr, nullptr, &s);
  if (n < 0 || !s.ok) {
    std::snprintf(why, 320, "check error: %s", s.error);
    return false;
  }
  if (s.direct_blocks != g_baseline + planted) {
    std::snprintf(why, 320, "direct=%llu expected=%llu", s.direct_blocks, g_baseline + planted);
    return false;
  }
  std::snprintf(why, 320, "total_ms=%.0f world_stopped_ms=%.0f", s.total_ms, s.world_stopped_ms);
  return true;
}

void* ChurnHeap(void* raw) {
  static thread_local void* slots[kChurnSlots];
  hgprog::Random random(reinterpret_cast<uintptr_t>(raw));
  while (!g_stop.load(std::memory_order_relaxed)) {
    const uint64_t r = random.Next();
    void*& slot = slots[r % kChurnSlots];
    const size_t size = 1 + (r >> 20) % 8192;
    if ((r >> 40) % 3 == 0) {
      free(slot);
      slot = malloc(size);
    } else if ((r >> 40) % 3 == 1) {
      free(slot);
      slot = nullptr;
    } else {
      slot = realloc(slot, size);
    }
  }
  return nullptr;
}

void* ShortThread(void*) {
  void* volatile p = malloc(100);
  free(p);
  return nullptr;
}

void* ChurnThreads(void*) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    pthread_t t;
    if (pthread_create(&t, nullptr, ShortThread, nullptr) == 0) pthread_join(t, nullptr);
  }
  return nullptr;
}

int Churn(int tries) {
  pthread_t threads[kChurnThreads + 1];
  for (uintptr_t i = 0; i < kChurnThreads; ++i) {
    pthread_create(&threads[i], nullptr, ChurnHeap, reinterpret_cast<void*>(i + 1));
  }
  pthread_create(&threads[kChurnThreads], nullptr, ChurnThreads, nullptr);
  char why[320];
  for (int i = 1; i <= tries; ++i) {
    hgprog::LeakBlocks(1, kLeakSize);
    if (ExactCheck(static_cast<unsigned long long>(i), why)) {
      std::printf("try %d ok %s\n", i, why);
    } else {
      std::printf("try %d failed %s\n", i, why);
    }
  }
  g_stop.store(true);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  return 0;
}

struct OverlapCheck {
  pthread_barrier_t* barrier;
  bool exact = false;
  char why[320] = {};
};

void* OverlapThread(void* raw) {
  auto* c = static_cast<OverlapCheck*>(raw);
  pthread_barrier_wait(c->barrier);
  c->exact = ExactCheck(kOverlapLeaks, c->why);
  return nullptr;
}

// Whether heapgraph handles the scan signal (not with scan_signal=0: the signal would kill us).
bool ScanSignalHandled() {
  struct sigaction action = {};
  sigaction(kScanSignal, nullptr, &action);
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

// One round: two API checks at once, a signal check and a forked child's check during them.
bool OverlapRound(char* why) {
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, nullptr, 3);
  OverlapCheck checks[2] = {{&barrier}, {&barrier}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], nullptr, OverlapThread, &checks[i]);
  pthread_barrier_wait(&barrier);
  if (ScanSignalHandled()) kill(getpid(), kScanSignal);
  const pid_t child = fork();
  if (child == 0) {
    char child_why[320];
    const bool exact = ExactCheck(kOverlapLeaks, child_why);
    if (!exact) std::fprintf(stderr, "child: %s\n", child_why);
    _exit(exact ? 0 : 1);
  }
  const int child_status = child > 0 ? hgprog::WaitForChild(child, kChildTimeoutMs) : -2;
  for (pthread_t t : threads) pthread_join(t, nullptr);
  pthread_barrier_destroy(&barrier);
  for (const OverlapCheck& c : checks) {
    if (!c.exact) {
      std::snprintf(why, 320, "%s", c.why);
      return false;
    }
  }
  if (child_status != 0) {
    std::snprintf(why, 320, "forked child's check: %s",
                  child_status == -1   ? "hung (killed after 30 s)"
                  : child_status == -2 ? "fork failed"
                                       : "not exact (its stderr says why)");
    return false;
  }
  return true;
}

int Overlap(int tries) {
  hgprog::LeakBlocks(kOverlapLeaks, kLeakSize);
  hgprog::ScrubStack();  // the other threads' checks scan main's frames, laid over this area
  char why[320];
  for (int i = 1; i <= tries; ++i) {
    if (OverlapRound(why)) {
      std::printf("try %d ok\n", i);
    } else {
      std::printf("try %d failed %s\n", i, why);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  const int tries = argc == 3 ? std::atoi(argv[2]) : 0;
  const bool churn = argc == 3 && std::strcmp(argv[1], "churn") == 0;
  const bool overlap = argc == 3 && std::strcmp(argv[1], "overlap") == 0;
  if (tries <= 0 || (!churn && !overlap)) {
    std::fprintf(stderr, "usage: stress_checks churn|overlap N\n");
    return 64;
  }
  heapgraph_leak_summary s = {};
  if (heapgraph_check_leaks(nullptr, nullptr, &s) < 0 || !s.ok) {
    std::printf("baseline failed %s\n", s.error);
  }
  g_baseline = s.direct_blocks;
  std::printf("baseline direct=%llu\n", g_baseline);
  return churn ? Churn(tries) : Overlap(tries);
}
