// bench/: the typing's cost on heaps where every block is typed (docs/performance.md, "Typing: a
// heap of typed objects"). Linked with libheapgraph.so and heapgraph's libraries; builds one heap,
// then runs scanner::RunLeakScan alternately with and without typing (ScanOptions::types), R
// times each on the same heap in the same process, and report/TypedAnalysis (types, strong
// references, retain cycles, and AddTo: the reachable cycles' records with their retention
// paths) after each typed scan. Prints one line per scan and the medians.
//
// Usage: typed_heap_bench MODE N [R]
//   polymorphic N  N objects of a polymorphic 64-byte class holding 7 pointers to random live
//                  objects (the first threads a chain through all of them from a global root),
//                  every 100th leaked: bigheap's shape (bench/leak_workload.cc) with every block
//                  typed by its vtable. The raw pointers are conservative: no retain cycles, but
//                  one giant reachable typed component, so the retention-path search runs.
//   sharedpairs N  N pairs of make_shared objects A and B holding shared_ptrs to each other
//                  (a retain cycle each), kept reachable by a global heap array of pointers to A:
//                  N reachable shared_ptr retain cycles, each with its retention path.
// R defaults to 3. Run with HEAPGRAPH_OPTIONS=dir=<tmp dir>,large_threshold=0. The analysis runs
// with the thread's allocations not recorded, as report/LeakCheck runs it.
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "heap/plugin/RecorderEntries.h"
#include "report/Symbolizer.h"
#include "report/TypedAnalysis.h"
#include "scanner/LeakScan.h"

namespace {

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// Memory that is neither a heap block nor a root once unmapped.
template <typename T>
T* MapArray(size_t n) {
  void* p =
      mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  return static_cast<T*>(p);
}

struct Node {
  virtual ~Node() = default;
  Node* next[7] = {};
};
static_assert(sizeof(Node) == 64);

struct PairB;
struct PairA {
  std::shared_ptr<PairB> b;
  uint64_t payload = 0;
};
struct PairB {
  std::shared_ptr<PairA> a;
  uint64_t payload = 0;
};

Node* volatile g_first;
// A heap array held by a global: reached by marking, whatever the kernel does with mappings.
PairA** volatile g_pairs;

__attribute__((noinline)) uint64_t BuildPolymorphic(uint64_t n) {
  Rng rng{0x9e3779b97f4a7c15};
  Node** all = MapArray<Node*>(n);
  for (uint64_t i = 0; i < n; ++i) all[i] = new Node;
  std::vector<Node*> live;
  for (uint64_t i = 0; i < n; ++i) {
    if (i % 100 != 99) live.push_back(all[i]);
  }
  for (size_t i = 0; i < live.size(); ++i) {
    live[i]->next[0] = i + 1 < live.size() ? live[i + 1] : nullptr;
    for (int k = 1; k < 7; ++k) live[i]->next[k] = live[rng.Next() % live.size()];
  }
  g_first = live.front();
  munmap(all, n * sizeof(Node*));
  return n / 100;
}

__attribute__((noinline)) uint64_t BuildSharedPairs(uint64_t n) {
  g_pairs = new PairA*[n];
  for (uint64_t i = 0; i < n; ++i) {
    auto a = std::make_shared<PairA>();
    auto b = std::make_shared<PairB>();
    a->b = b;
    b->a = a;
    g_pairs[i] = a.get();
  }
  return 0;
}

__attribute__((noinline)) void ScrubStack() {
  char area[256 * 1024];
  memset(area, 0, sizeof(area));
  asm volatile("" : : "r"(area) : "memory");
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: typed_heap_bench polymorphic|sharedpairs N [R]\n");
    return 64;
  }
  std::string mode = argv[1];
  uint64_t n = std::strtoull(argv[2], nullptr, 10);
  int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  uint64_t expected = 0;
  if (mode == "polymorphic") {
    expected = BuildPolymorphic(n);
  } else if (mode == "sharedpairs") {
    expected = BuildSharedPairs(n);
  } else {
    return 64;
  }
  ScrubStack();
  std::vector<double> typed_ms, untyped_ms, typing_ms, path_ms, analysis_ms;
  for (int r = 0; r < 2 * repeats; ++r) {
    heapgraph::scanner::ScanOptions options;
    options.types = r % 2 == 0;
    double t0 = NowMs();
    heapgraph::scanner::ScanResult scan = heapgraph::scanner::RunLeakScan(options);
    double t1 = NowMs();
    if (!scan.ok) {
      std::fprintf(stderr, "scan failed: %s\n", scan.error.c_str());
      return 1;
    }
    if (!options.types) {
      untyped_ms.push_back(t1 - t0);
      std::printf("untyped scan_ms=%.1f leaked=%zu (expected %llu) live=%llu\n", t1 - t0,
                  scan.leaked.size(), static_cast<unsigned long long>(expected),
                  static_cast<unsigned long long>(scan.stats.live_blocks));
      continue;
    }
    auto ignore = heapgraph::RecorderEntries::Get().ignore_thread;
    int before = ignore != nullptr ? ignore(1) : 0;
    heapgraph::report::Symbolizer symbolizer;
    double t2 = NowMs();
    heapgraph::report::TypedAnalysis analysis(scan, symbolizer);
    heapgraph::report::LeakReport report;  // no leak records: the reachable cycles' part
    analysis.AddTo(report);
    double t3 = NowMs();
    if (ignore != nullptr) ignore(before);
    typed_ms.push_back(t1 - t0);
    typing_ms.push_back(scan.typed.typing_ms);
    path_ms.push_back(scan.typed.path_ms);
    analysis_ms.push_back(t3 - t2);
    std::printf(
        "typed   scan_ms=%.1f typing_ms=%.1f path_ms=%.1f analysis_ms=%.1f typed_objects=%zu "
        "typed_edges=%zu strong_edges=%zu retain_cycles=%zu reachable_records=%zu leaked=%zu\n",
        t1 - t0, scan.typed.typing_ms, scan.typed.path_ms, t3 - t2, scan.typed.objects.size(),
        scan.typed.edges.size(), analysis.strong_edges().size(), analysis.retain_cycles().size(),
        report.cycles.size(), scan.leaked.size());
  }
  double typed = Median(typed_ms), untyped = Median(untyped_ms);
  std::printf(
      "MEDIAN mode=%s n=%llu typed_scan_ms=%.1f untyped_scan_ms=%.1f ratio=%.2f typing_ms=%.1f "
      "(%.0f%% of untyped) path_ms=%.1f analysis_ms=%.1f\n",
      mode.c_str(), static_cast<unsigned long long>(n), typed, untyped,
      untyped > 0 ? typed / untyped : 0, Median(typing_ms),
      untyped > 0 ? 100 * Median(typing_ms) / untyped : 0, Median(path_ms), Median(analysis_ms));
  return 0;
}
