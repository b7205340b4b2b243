// Child program of tests/check/LeakCheckAllocationWaitTest: THREADS threads allocate and free
// without pause while the main thread runs CHECKS API leak checks, each writing its JSON report
// to DIR/check-<i>.json (the test reads each check's longest allocation wait there). Linked with
// libheapgraph.so and libheapgraph_scan.so. Usage: alloc_during_checks THREADS CHECKS DIR; prints
// "checks <ok> of <n>, <a> allocations during the checks", then per check "wait <i> <ms>": the C
// summary's longest_allocation_wait_ms (%.17g, to compare with the JSON's).
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "heapgraph/heapgraph.h"

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_started{0};
std::atomic<unsigned long> g_allocations{0};

// Keeps 256 blocks live, replacing one at a time.
void* Churn(void*) {
  constexpr int kLive = 256;
  void* live[kLive] = {};
  unsigned seed = 12345;
  g_started.fetch_add(1);
  while (!g_stop.load(std::memory_order_relaxed)) {
    int victim = static_cast<int>(rand_r(&seed) % kLive);
    free(live[victim]);
    live[victim] = malloc(16 + rand_r(&seed) % 1024);
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  for (void* p : live) free(p);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: alloc_during_checks THREADS CHECKS DIR\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const int checks = std::atoi(argv[2]);
  std::vector<pthread_t> ids(threads);
  for (pthread_t& id : ids) pthread_create(&id, nullptr, &Churn, nullptr);
  while (g_started.load() < threads) sched_yield();
  const unsigned long before = g_allocations.load();
  int ok = 0;
  std::vector<double> waits(checks, -1);
  for (int i = 0; i < checks; ++i) {
    std::string json = std::string(argv[3]) + "/check-" + std::to_string(i) + ".json";
    heapgraph_leak_summary summary;
    if (heapgraph_check_leaks(json.c_str(), nullptr, &summary) >= 0) ++ok;
    waits[i] = summary.longest_allocation_wait_ms;
  }
  const unsigned long during = g_allocations.load() - before;
  g_stop = true;
  for (pthread_t id : ids) pthread_join(id, nullptr);
  std::printf("checks %d of %d, %lu allocations during the checks\n", ok, checks, during);
  for (int i = 0; i < checks; ++i) std::printf("wait %d %.17g\n", i, waits[i]);
  return 0;
}
