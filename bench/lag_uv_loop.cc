// bench/: the libuv adapter's own cost per loop iteration (issue 16; run by
// bench/run_lag_overhead.sh under LD_PRELOAD=libheapgraph.so). A libuv loop whose only active
// handle is an idle handle: every iteration polls with a zero timeout and calls the idle callback,
// which does trivial work, until argv[2] iterations (default 1,000,000) have run. Prints
// "cpu_s <process CPU seconds> wall_s <wall seconds> work <iterations>", both times taken around
// the loop only (CPU of every thread: the watchdog's included). Modes (argv[1]; `modes` lists them,
// the baseline first):
//   off      no adapter: nothing calls heapgraph_work_begin/end, the monitor never starts
//   adapter  libheapgraph_uv's monitor on the loop: every iteration ends a unit before its poll
//            and begins one after it (two handle callbacks and two work marks per iteration)
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "adapters/uv/heapgraph_uv.h"

namespace {

volatile unsigned long g_sink = 0;
unsigned long g_iterations = 0;
unsigned long g_wanted = 1000000;

double WallSeconds() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

double CpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec / 1e6;
}

void OnIdle(uv_idle_t* idle) {
  g_sink = g_sink + 1;
  if (++g_iterations == g_wanted) uv_idle_stop(idle);
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "off";
  if (strcmp(mode, "modes") == 0) {
    printf("off adapter\n");
    return 0;
  }
  bool adapter = strcmp(mode, "adapter") == 0;
  if (!adapter && strcmp(mode, "off") != 0) {
    fprintf(stderr, "lag_uv_loop: unknown mode %s\n", mode);
    return 2;
  }
  if (argc > 2) g_wanted = strtoul(argv[2], nullptr, 10);
  uv_loop_t* loop = uv_default_loop();
  heapgraph_uv_monitor monitor;
  if (adapter && heapgraph_uv_monitor_start(&monitor, loop) != 0) return 1;
  uv_idle_t idle;
  uv_idle_init(loop, &idle);
  uv_idle_start(&idle, OnIdle);
  double wall = WallSeconds(), cpu = CpuSeconds();
  uv_run(loop, UV_RUN_DEFAULT);
  wall = WallSeconds() - wall;
  cpu = CpuSeconds() - cpu;
  if (adapter) heapgraph_uv_monitor_stop(&monitor);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);  // the close callbacks
  uv_loop_close(loop);
  printf("cpu_s %.6f wall_s %.6f work %lu\n", cpu, wall, g_iterations);
  return 0;
}
