// bench/: the lag monitor's cost on a busy loop (run by bench/run_lag_overhead.sh under
// LD_PRELOAD=libheapgraph.so). Spins for argv[2] seconds of wall time in one of three modes and
// prints "cpu_s <process CPU seconds> wall_s <wall seconds> work <loop steps>" (`modes` lists the
// modes, the baseline first):
//   off       no heapgraph_work_begin/end calls: the monitor never starts (the baseline)
//   idle      1 ms units: the monitor runs, no unit lasts long enough to be sampled
//   sampling  one unit for the whole run: sampled every lag_sample_ms
// The two functions are looked up with dlsym, so the program needs no link to heapgraph.
#include <dlfcn.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

volatile unsigned long g_sink = 0;

double Now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// Spins for `seconds` of wall time; returns the loop steps done.
unsigned long Spin(double seconds) {
  unsigned long steps = 0;
  double end = Now(CLOCK_MONOTONIC) + seconds;
  while (Now(CLOCK_MONOTONIC) < end) {
    for (int i = 0; i < 1000; ++i) g_sink = g_sink + 1;
    ++steps;
  }
  return steps;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "off";
  if (strcmp(mode, "modes") == 0) {
    printf("off idle sampling\n");
    return 0;
  }
  double seconds = argc > 2 ? atof(argv[2]) : 5;
  using Fn = void (*)();
  auto begin = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "heapgraph_work_begin"));
  auto end = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "heapgraph_work_end"));
  if (strcmp(mode, "off") != 0 && (begin == nullptr || end == nullptr)) {
    fprintf(stderr, "lag_busy: run under LD_PRELOAD=libheapgraph.so\n");
    return 2;
  }
  unsigned long work = 0;
  if (strcmp(mode, "idle") == 0) {
    double stop = Now(CLOCK_MONOTONIC) + seconds;
    while (Now(CLOCK_MONOTONIC) < stop) {
      begin();
      work += Spin(0.001);
      end();
    }
  } else if (strcmp(mode, "sampling") == 0) {
    begin();
    work = Spin(seconds);
    end();
  } else {
    work = Spin(seconds);
  }
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  double cpu =
      u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
  printf("cpu_s %.4f wall_s %.4f work %lu\n", cpu, seconds, work);
  return 0;
}
