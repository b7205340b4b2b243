// bench/: the resident memory libunwind's unw_backtrace() adds to every thread that calls it
// (docs/performance.md, "Leak scan"): its per-thread trace cache. heapgraph's recorder unwinds
// with unw_backtrace on every thread that allocates, and the leak scan reads that anonymous memory
// as a root (it holds no block). Starts T threads that each either do nothing or call
// unw_backtrace once, then sleep; prints the VmRSS growth per thread.
//
// Usage: leak_unwind_cache_bench [THREADS (default 200)]
#include <libunwind.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

long RssKb() {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f != nullptr && fgets(line, sizeof(line), f) != nullptr) {
    if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
  }
  if (f != nullptr) fclose(f);
  return kb;
}

void* Idle(void* unwind) {
  if (unwind != nullptr) {
    void* frames[32];
    unw_backtrace(frames, 32);
  }
  sleep(2);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 200;
  for (int unwind = 0; unwind < 2; ++unwind) {
    long before = RssKb();
    std::vector<pthread_t> ids(static_cast<size_t>(threads));
    for (pthread_t& t : ids) pthread_create(&t, nullptr, Idle, unwind != 0 ? &ids : nullptr);
    usleep(500 * 1000);
    printf("%d threads %s: +%ld KiB RSS per thread\n", threads,
           unwind != 0 ? "after one unw_backtrace each" : "idle", (RssKb() - before) / threads);
    for (pthread_t t : ids) pthread_join(t, nullptr);
  }
  return 0;
}
