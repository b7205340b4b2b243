// Child program of tests/check/LeakCheckOverlapTest: leak checks that overlap other checks, run
// from a thread with a malloc arena of its own, or in children forked while the parent checks.
// Every check must report exactly the planted leaks. Linked with libheapgraph.so and
// libheapgraph_scan.so. Usage: overlapping_checks MODE COUNT [LEAKS]; modes:
//   thread   COUNT checks from a thread that allocates nothing else; prints "exact <k> of <n>"
//   overlap  COUNT API checks on the main thread while another thread keeps sending the scan
//            signal (one at a time: the next once the previous report is written); prints
//            "exact <k> of <n>", then "signals <s> <recording dir>" (the test reads the reports)
//   fork     COUNT children forked while a thread keeps checking, each checking itself once;
//            prints "exact <k> of <n>"
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "heapgraph/heapgraph.h"

namespace {

int g_leaks = 2000;
void* volatile g_sink;
std::atomic<bool> g_stop{false};
std::atomic<int> g_signals{0};

__attribute__((noinline)) void Plant() {
  for (int i = 0; i < g_leaks; ++i) {
    void* p = malloc(48);
    memset(p, 0x22, 48);
    g_sink = p;
  }
  g_sink = nullptr;
}

// Zeroes the stack below main's frame: no stale slot of Plant's keeps a leaked block.
__attribute__((noinline)) void Scrub() {
  char area[64 * 1024];
  explicit_bzero(area, sizeof(area));
  asm volatile("" : : "r"(area) : "memory");
}

// One check; a wrong count goes to stderr when `say`.
bool Exact(bool say = true) {
  heapgraph_leak_summary summary;
  int found = heapgraph_check_leaks(nullptr, nullptr, &summary);
  if (say && found != g_leaks) std::fprintf(stderr, "check: %d (%s)\n", found, summary.error);
  return found == g_leaks;
}

void* CheckFromOwnThread(void* count) {
  static int exact = 0;
  for (int i = 0; i < *static_cast<int*>(count); ++i) exact += Exact() ? 1 : 0;
  return &exact;
}

// Sends the scan signal, waiting for each report before the next. Allocates nothing: a free's
// hook leaves block addresses in the frames below, which the next frames would keep live.
void* Signaller(void*) {
  const char* dir = heapgraph_recording_dir();
  while (!g_stop.load()) {
    int n = g_signals.fetch_add(1) + 1;
    kill(getpid(), SIGRTMIN + 5);
    char text[1024];
    std::snprintf(text, sizeof(text), "%s/leaks-%d.txt", dir, n);
    struct stat st;
    while (stat(text, &st) != 0) usleep(2000);
  }
  return nullptr;
}

void* CheckUntilStopped(void*) {
  while (!g_stop.load()) Exact(false);  // only the children's checks are judged
  return nullptr;
}

int Thread(int count) {
  pthread_t t;
  void* exact = nullptr;
  pthread_create(&t, nullptr, &CheckFromOwnThread, &count);
  pthread_join(t, &exact);
  std::printf("exact %d of %d\n", *static_cast<int*>(exact), count);
  return 0;
}

int Overlap(int count) {
  pthread_t t;
  pthread_create(&t, nullptr, &Signaller, nullptr);
  int exact = 0;
  for (int i = 0; i < count; ++i) exact += Exact() ? 1 : 0;
  g_stop = true;
  pthread_join(t, nullptr);
  std::printf("exact %d of %d\nsignals %d %s\n", exact, count, g_signals.load(),
              heapgraph_recording_dir());
  return 0;
}

int Fork(int count) {
  pthread_t t;
  pthread_create(&t, nullptr, &CheckUntilStopped, nullptr);
  int exact = 0;
  for (int i = 0; i < count; ++i) {
    usleep(20000 + (i * 7919) % 40000);  // somewhere inside the checker's current check
    pid_t pid = fork();
    if (pid == 0) _exit(Exact() ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    exact += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 1 : 0;
  }
  g_stop = true;
  pthread_join(t, nullptr);
  std::printf("exact %d of %d\n", exact, count);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  static char buffer[1 << 16];
  setvbuf(stdout, buffer, _IOLBF, sizeof(buffer));
  if (argc < 3) return 2;
  if (argc > 3) g_leaks = std::atoi(argv[3]);
  int count = std::atoi(argv[2]);
  Plant();
  Scrub();
  if (std::strcmp(argv[1], "thread") == 0) return Thread(count);
  if (std::strcmp(argv[1], "overlap") == 0) return Overlap(count);
  if (std::strcmp(argv[1], "fork") == 0) return Fork(count);
  return 2;
}
