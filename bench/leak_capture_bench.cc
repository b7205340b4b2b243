// bench/: the world-stopped part of a leak check with many threads, repeated: N threads blocked
// in FUTEX_WAIT (each having run unw_backtrace once, like a recorded thread), then REPS times
// ThreadCapture::StopAll(), a raw clone(SIGCHLD) of the stopped process (the snapshot's cost),
// ReleaseAll(); then (alternating with those) ThreadCapture::CloneStoppedWorld(), the same three
// steps in one call (the ptrace helper clones and detaches); prints the median and the range of
// each step in ms.
// Usage: leak_capture_bench [THREADS=4000] [REPS=9] [HELPERS=0: ThreadCapture's choice, 1 or 2]
#include <libunwind.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "roots/ThreadCapture.h"

namespace {

std::atomic<uint32_t> g_release{0};

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

void* Blocked(void*) {
  void* frames[16];
  unw_backtrace(frames, 16);  // the per-thread trace cache every recorded thread has
  while (g_release.load() == 0) {
    syscall(SYS_futex, &g_release, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
  }
  return nullptr;
}

void Print(const char* name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-16s median %7.2f ms  (min %7.2f, max %7.2f)\n", name, v[v.size() / 2], v.front(),
              v.back());
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4000;
  int reps = argc > 2 ? std::atoi(argv[2]) : 9;
  heapgraph::roots::ThreadCapture::Options options;
  options.helpers = argc > 3 ? std::atoi(argv[3]) : 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  std::vector<pthread_t> tids(threads);
  for (pthread_t& t : tids) pthread_create(&t, &attr, Blocked, nullptr);
  std::vector<double> stop, clone, release, total, combined, held, held_one_call;
  std::vector<double> attach, helper_clone, detach;  // CloneStoppedWorld()'s steps
  int one_call_helpers = 0;
  for (int r = 0; r < reps; ++r) {
    heapgraph::roots::ThreadCapture capture(options);
    double t0 = Now();
    if (!capture.StopAll()) {
      std::fprintf(stderr, "StopAll: %s\n", capture.error().c_str());
      return 1;
    }
    double t1 = Now();
    long pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) _exit(0);
    double t2 = Now();
    capture.ReleaseAll();
    double t3 = Now();
    if (pid > 0) waitpid(static_cast<pid_t>(pid), nullptr, 0);
    usleep(50 * 1000);
    heapgraph::roots::ThreadCapture one_call(options);
    double t4 = Now();
    pid_t snapshot = one_call.CloneStoppedWorld([](void*) { return 0; }, nullptr);
    double t5 = Now();
    if (snapshot <= 0) {
      std::fprintf(stderr, "CloneStoppedWorld: %d %s\n", snapshot, one_call.error().c_str());
      return 1;
    }
    waitpid(snapshot, nullptr, __WALL);
    combined.push_back(t5 - t4);
    held.push_back(capture.stats().threads_stopped_ms);
    held_one_call.push_back(one_call.stats().threads_stopped_ms);
    attach.push_back(one_call.stats().attach_ms);
    helper_clone.push_back(one_call.stats().snapshot_clone_ms);
    detach.push_back(one_call.stats().detach_ms);
    one_call_helpers = one_call.stats().helpers;
    stop.push_back(t1 - t0);
    clone.push_back(t2 - t1);
    release.push_back(t3 - t2);
    total.push_back(t3 - t0);
    usleep(100 * 1000);
  }
  double load = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  std::printf("%d threads, %d reps, %d helpers, load %.2f\n", threads, reps, one_call_helpers,
              load);
  Print("StopAll", stop);
  Print("clone", clone);
  Print("ReleaseAll", release);
  Print("stopped", total);
  Print("one call", combined);  // CloneStoppedWorld()
  // The helper's own clock, first seize to last detach, for the two sequences.
  Print("held (3 steps)", held);
  Print("held (one call)", held_one_call);
  Print("- attach", attach);
  Print("- clone", helper_clone);
  Print("- detach", detach);
  g_release.store(1);
  syscall(SYS_futex, &g_release, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
  for (pthread_t& t : tids) pthread_join(t, nullptr);
  return 0;
}
