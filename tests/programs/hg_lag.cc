// Lag monitor child (tests/heap/runtime/RecorderLagTest.cc), linked with libheapgraph for
// heapgraph_work_begin/end. Prints "dir <recording dir>" and the code ranges of its slow functions,
// then "ready <pid>", then runs argv[1]:
//   sleep      one unit whose handler sleeps 3 s (SleepingHandler), then exits
//   alternate  one long unit: FrequentSpin (100M loop steps), RareSpin (25M), 40 times; exits
//   deadlock   one unit blocked on a mutex its own thread holds, until killed
//   cpu        2 s of 5 ms busy units, then exits
//   hang       like sleep, but sleeps until killed
//   blocked    like sleep, with the sampling signal (SIGRTMIN+6) blocked on the thread
//   threadexit a second thread begins a unit, sleeps 2 s in SleepingHandler while sampled, and
//              exits without ending it ("tid <n>"); the main thread then runs short units
//   inhandler  the unit raises SIGUSR1, whose handler (InSignalHandler) sleeps 3 s: sampled
//              inside a signal handler
//   noend      one unit sleeps 2 s and the program returns from main without ending it
//   twothreads two more threads, each monitored, lag at the same time: each begins a unit that
//              sleeps 3 s in its own handler (FirstWorkerHandler, SecondWorkerHandler), ends it
//              and runs short units ("worker <handler> <tid>"); the main thread waits outside
//              any unit
//   apicheck   like sleep, while a second thread calls heapgraph_check_leaks() 3 times during the
//              lag ("check <n> <result>": leaked blocks, or -1): the C API while the main thread
//              is sampled
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
  for (unsigned long i = 0; i < 100000000ul; ++i) g_sink = i;
}

__attribute__((noinline)) void RareSpin() {
  for (unsigned long i = 0; i < 25000000ul; ++i) g_sink = i;
}

__attribute__((noinline)) void DeadlockedHandler() {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&mutex);
  pthread_mutex_lock(&mutex);  // never returns
}

__attribute__((noinline)) void InSignalHandler(int) {
  SleepingHandler(3);
}

// Each sleeps, then writes: not a tail call, so that the sampled stacks keep the handler's frame.
__attribute__((noinline)) void FirstWorkerHandler() {
  hgprog::SleepFully(3);
  g_sink = 1;
}

__attribute__((noinline)) void SecondWorkerHandler() {
  hgprog::SleepFully(3);
  g_sink = 2;
}

__attribute__((noinline)) void* ExitingThread(void*) {
  printf("tid %d\n", gettid());
  fflush(stdout);
  heapgraph_work_begin();
  SleepingHandler(2);
  return nullptr;  // exits inside the unit
}

}  // extern "C"

namespace {

struct Worker {
  const char* name;
  void (*handler)();
};

// One monitored thread of `twothreads`: one 3 s unit in its handler, then short ones.
void* WorkerThread(void* arg) {
  const Worker* worker = static_cast<const Worker*>(arg);
  printf("worker %s %d\n", worker->name, gettid());
  fflush(stdout);
  heapgraph_work_begin();
  worker->handler();
  heapgraph_work_end();
  for (int i = 0; i < 10; ++i) {
    heapgraph_work_begin();
    usleep(50000);
    heapgraph_work_end();
  }
  return nullptr;
}

void RunTwoLaggingThreads() {
  static const Worker kWorkers[2] = {{"FirstWorkerHandler", FirstWorkerHandler},
                                     {"SecondWorkerHandler", SecondWorkerHandler}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    pthread_create(&threads[i], nullptr, WorkerThread, const_cast<Worker*>(&kWorkers[i]));
  }
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
}

// The second thread of `apicheck`: three checks through the public C API, 0.5 s apart, while the
// main thread lags (and is sampled).
void* CheckingThread(void*) {
  for (int i = 1; i <= 3; ++i) {
    usleep(500000);
    printf("check %d %d\n", i, heapgraph_check_leaks(nullptr, nullptr, nullptr));
    fflush(stdout);
  }
  return nullptr;
}

}  // namespace

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
  PrintRange("InSignalHandler", reinterpret_cast<void*>(&InSignalHandler));
  PrintRange("FirstWorkerHandler", reinterpret_cast<void*>(&FirstWorkerHandler));
  PrintRange("SecondWorkerHandler", reinterpret_cast<void*>(&SecondWorkerHandler));
  if (strcmp(mode, "blocked") == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 6);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
  } else if (strcmp(mode, "inhandler") == 0) {
    signal(SIGUSR1, InSignalHandler);
  }
  Ready();
  heapgraph_work_begin();
  if (strcmp(mode, "sleep") == 0 || strcmp(mode, "blocked") == 0) {
    SleepingHandler(3);
  } else if (strcmp(mode, "inhandler") == 0) {
    raise(SIGUSR1);
  } else if (strcmp(mode, "noend") == 0) {
    SleepingHandler(2);
    printf("done\n");
    return 0;
  } else if (strcmp(mode, "threadexit") == 0) {
    heapgraph_work_end();  // only the second thread lags
    pthread_t thread;
    pthread_create(&thread, nullptr, ExitingThread, nullptr);
    pthread_join(thread, nullptr);
    heapgraph_work_begin();
  } else if (strcmp(mode, "apicheck") == 0) {
    pthread_t checker;
    pthread_create(&checker, nullptr, CheckingThread, nullptr);
    SleepingHandler(3);
    pthread_join(checker, nullptr);
  } else if (strcmp(mode, "twothreads") == 0) {
    heapgraph_work_end();  // only the two workers lag
    RunTwoLaggingThreads();
    heapgraph_work_begin();
  } else if (strcmp(mode, "hang") == 0) {
    SleepingHandler(1000);
  } else if (strcmp(mode, "alternate") == 0) {
    for (int i = 0; i < 40; ++i) {
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
