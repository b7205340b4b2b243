// Lag monitor child (tests/heap/runtime/RecorderLagTest.cc), linked with libheapgraph for
// heapgraph_work_begin/end. Prints "dir <recording dir>" and the code ranges of its slow functions,
// then "ready <pid>", then runs argv[1]:
//   sleep      one unit whose handler sleeps 3 s (SleepingHandler), then exits
//   alternate  one long unit: FrequentSpin (200M loop steps), RareSpin (100M), 10 times; exits
//   deadlock   one unit blocked on a mutex its own thread holds, until killed
//   cpu        2 s of 5 ms busy units, then exits
//   hang       like sleep, but sleeps until killed
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "heapgraph/heapgraph.h"
#include "tests/programs/ProgramSupport.h"

namespace {

volatile unsigned long g_sink = 0;  // keeps the busy loops

double Seconds() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

void Spin(double seconds) {
  double end = Seconds() + seconds;
  for (unsigned i = 0; Seconds() < end; ++i) g_sink = i;
}

}  // namespace

extern "C" {

__attribute__((noinline)) void SleepingHandler(unsigned seconds) {
  hgprog::SleepFully(seconds);
}

// No calls inside, so that the sampled top frame is the function itself.
__attribute__((noinline)) void FrequentSpin() {
  for (unsigned long i = 0; i < 200000000ul; ++i) g_sink = i;
}

__attribute__((noinline)) void RareSpin() {
  for (unsigned long i = 0; i < 100000000ul; ++i) g_sink = i;
}

__attribute__((noinline)) void DeadlockedHandler() {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&mutex);
  pthread_mutex_lock(&mutex);  // never returns
}

}  // extern "C"

int main(int argc, char** argv) {
  using namespace hgprog;
  LineBufferedStdout();
  const char* mode = argc > 1 ? argv[1] : "sleep";
  heapgraph_work_begin();  // the thread becomes a monitored one
  heapgraph_work_end();
  printf("dir %s\n", heapgraph_recording_dir());
  PrintRange("SleepingHandler", reinterpret_cast<void*>(&SleepingHandler));
  PrintRange("FrequentSpin", reinterpret_cast<void*>(&FrequentSpin));
  PrintRange("RareSpin", reinterpret_cast<void*>(&RareSpin));
  PrintRange("DeadlockedHandler", reinterpret_cast<void*>(&DeadlockedHandler));
  Ready();
  heapgraph_work_begin();
  if (strcmp(mode, "sleep") == 0) {
    SleepingHandler(3);
  } else if (strcmp(mode, "hang") == 0) {
    SleepingHandler(1000);
  } else if (strcmp(mode, "alternate") == 0) {
    for (int i = 0; i < 10; ++i) {
      FrequentSpin();
      RareSpin();
    }
  } else if (strcmp(mode, "deadlock") == 0) {
    DeadlockedHandler();
  } else if (strcmp(mode, "cpu") == 0) {
    heapgraph_work_end();
    double end = Seconds() + 2;
    while (Seconds() < end) {
      heapgraph_work_begin();
      Spin(0.005);
      heapgraph_work_end();
    }
    heapgraph_work_begin();
  }
  heapgraph_work_end();
  // A few short units after the lag: the watchdog writes the lag's end.
  for (int i = 0; i < 30; ++i) {
    heapgraph_work_begin();
    usleep(50000);
    heapgraph_work_end();
  }
  printf("done\n");
  return 0;
}
