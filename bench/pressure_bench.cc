// bench/: what the memory-pressure watcher costs (docs/performance.md, "FOOM"): one poll
// (MemoryLimit::Read + Percent), and the parts of a watermark refresh at 1M live blocks: the
// category totals over the tree (CategoryTotals::AddHeapTree) and the type refresh
// (report::TypeRefresh::Take: copy the blocks out, index them, offer each to the typed-graph
// readers through LiveMemory's process_vm_readv windows, name the types), with the readers'
// preparation (ELF symbol tables for std::function managers, ...) measured apart: it runs once
// and again only when a module is loaded or unloaded. Google Benchmark; the tree lives in a
// temporary directory.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "check/TypeRefresh.h"
#include "heap/pressure/CategoryTotals.h"
#include "heap/pressure/MemoryLimit.h"
#include "heap/store/LiveAllocationTree.h"

namespace {

struct Widget {
  virtual ~Widget() = default;
  long value = 1;
};

// 1M live polymorphic objects recorded in a tree, built once.
struct Heap {
  Heap() {
    char pattern[] = "/tmp/hg-pressure-bench-XXXXXX";
    dir = mkdtemp(pattern);
    dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    tree.Create(dir_fd, "heap.tree", 64, 22);
    for (uint32_t i = 0; i < kBlocks; ++i) {
      objects.push_back(std::make_unique<Widget>());
      heapgraph::BlockRecord b;
      b.address = reinterpret_cast<uint64_t>(objects.back().get());
      b.size = sizeof(Widget);
      b.stack = 1;
      b.seq = i;
      b.function = heapgraph::format::AllocFunction::kMalloc;
      tree.Insert(b);
    }
  }
  ~Heap() {
    close(dir_fd);
    (void)!system(("rm -rf " + dir).c_str());
  }
  static constexpr uint32_t kBlocks = 1000000;
  std::string dir;
  int dir_fd = -1;
  heapgraph::LiveAllocationTree tree;
  std::vector<std::unique_ptr<Widget>> objects;
};

Heap& TheHeap() {
  static Heap* heap = new Heap;
  return *heap;
}

void BM_Poll(benchmark::State& state) {
  heapgraph::MemoryLimit limit;
  limit.Discover(uint64_t{1} << 40);
  for (auto _ : state) {
    heapgraph::MemoryReading r = limit.Read();
    benchmark::DoNotOptimize(limit.Percent(r));
  }
}
BENCHMARK(BM_Poll);

void BM_CategoryTotals1M(benchmark::State& state) {
  Heap& heap = TheHeap();
  heapgraph::CategoryTotals totals;
  totals.Map();
  for (auto _ : state) {
    totals.Clear();
    totals.AddHeapTree(heap.tree);
    uint32_t n = 0;
    benchmark::DoNotOptimize(totals.Pack(&n));
  }
  state.counters["blocks"] = static_cast<double>(totals.heap_count());
}
BENCHMARK(BM_CategoryTotals1M)->Unit(benchmark::kMillisecond);

void BM_TypeRefresh1M(benchmark::State& state) {
  Heap& heap = TheHeap();
  heapgraph::report::TypeRefresh refresh;
  refresh.Take(heap.tree);  // prepares the readers
  heapgraph::report::TypeSnapshot snapshot;
  for (auto _ : state) snapshot = refresh.Take(heap.tree);
  state.counters["typed"] = static_cast<double>(snapshot.blocks.size());
  state.counters["copies"] = static_cast<double>(snapshot.copies);
}
BENCHMARK(BM_TypeRefresh1M)->Unit(benchmark::kMillisecond);

// A std::function instantiation, so that this program has a _M_manager and the std::function
// reader is active (as in any program that uses std::function).
std::function<int()> g_function = [] { return 1; };

// The part proportional to live bytes: the std::function reader looks at every word of every block
// (for a manager address), so 64 live 1 MiB blocks are read whole through LiveMemory's windows.
void BM_TypeRefreshBytes64M(benchmark::State& state) {
  benchmark::DoNotOptimize(g_function);
  heapgraph::LiveAllocationTree tree;
  char pattern[] = "/tmp/hg-pressure-bench-XXXXXX";
  std::string dir = mkdtemp(pattern);
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  tree.Create(dir_fd, "heap.tree", 4, 10);
  constexpr size_t kBlock = 1 << 20;
  std::vector<std::unique_ptr<uint64_t[]>> blocks;
  for (uint32_t i = 0; i < 64; ++i) {
    blocks.emplace_back(new uint64_t[kBlock / 8]());
    heapgraph::BlockRecord b;
    b.address = reinterpret_cast<uint64_t>(blocks.back().get());
    b.size = kBlock;
    b.stack = 1;
    b.seq = i;
    b.function = heapgraph::format::AllocFunction::kMalloc;
    tree.Insert(b);
  }
  heapgraph::report::TypeRefresh refresh;
  refresh.Take(tree);
  heapgraph::report::TypeSnapshot snapshot;
  for (auto _ : state) snapshot = refresh.Take(tree);
  state.counters["copies"] = static_cast<double>(snapshot.copies);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 64 * kBlock);
  close(dir_fd);
  (void)!system(("rm -rf " + dir).c_str());
}
BENCHMARK(BM_TypeRefreshBytes64M)->Unit(benchmark::kMillisecond);

// The first refresh of a process: the readers' preparation plus a refresh of an empty tree.
void BM_TypeRefreshPrepare(benchmark::State& state) {
  heapgraph::LiveAllocationTree empty;
  char pattern[] = "/tmp/hg-pressure-bench-XXXXXX";
  std::string dir = mkdtemp(pattern);
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  empty.Create(dir_fd, "heap.tree", 4, 10);
  for (auto _ : state) {
    heapgraph::report::TypeRefresh refresh;
    benchmark::DoNotOptimize(refresh.Take(empty).blocks.size());
  }
  close(dir_fd);
  (void)!system(("rm -rf " + dir).c_str());
}
BENCHMARK(BM_TypeRefreshPrepare)->Unit(benchmark::kMillisecond);

void BM_TypesFileWrite1M(benchmark::State& state) {
  Heap& heap = TheHeap();
  heapgraph::report::TypeRefresh refresh;
  heapgraph::report::TypeSnapshot snapshot = refresh.Take(heap.tree);
  for (auto _ : state) heapgraph::report::TypeRefresh::Write(snapshot, heap.dir_fd, 1);
}
BENCHMARK(BM_TypesFileWrite1M)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
