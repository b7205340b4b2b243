// bench/: tree_bench — the live-allocation tree as the recorder uses it
// (heap/store/LiveAllocationTree.h: 64 slab shards in a MAP_SHARED file, heap.tree format version
// 2) against the splay-shard tree of the VM regions (heap/store/VmRegionTree.h), which the heap
// tree once was (the hash shards between the two are measured in docs/performance.md):
//   slab         LiveAllocationTree as the recorder creates it (64 shards of up to 2^22 slots;
//                thread t inserts into shard t, each block's slot kept by the harness as the
//                recorder keeps it in the block's tag: no search on either operation)
//   splay        VmRegionTree created like the old heap tree (64 shards, 2^22 nodes)
//   splay_s26    the same splay tree with shard_shift=26: one shard per 64 MiB glibc heap
//   null         replays the trace without any container (harness cost)
//
// Workloads (addresses from a simulated glibc allocator, see AddressTrace):
//   BM_Churn/<impl>/<live>/threads:N   one op = Remove(random live block) + Insert(new block),
//       `live` blocks live in total (split over the threads); counters: ns_per_pair (each thread's
//       own loop wall time / its pairs, averaged over threads), bytes_per_block (metadata / live)
//   BM_ChurnRecent/<impl>/<live>  the same with temporal locality: 3 frees in 4 hit one of the 16
//       most recently allocated blocks (short-lived temporaries), the rest a random live block
//   BM_Ordered/<impl>_<method>/1000000  visits all live blocks in address order once; counter
//       ns_per_block. splay: per-shard ForEachInOrder + 64-way merge, or collect + sort;
//       slab: ForEach + sort (what LeakScan does).
// Run: tree_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/VmRegionTree.h"

namespace {

using heapgraph::BlockRecord;
using heapgraph::LiveAllocationTree;
using heapgraph::VmRegionTree;
using heapgraph::format::AllocFunction;

constexpr int64_t kOpsPerThread = 2'000'000;

uint64_t Mix(uint64_t& s) {  // splitmix64
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------------
// Scratch directory for the mapped files; removed at exit.
class TempDir {
 public:
  TempDir() {
    char path[] = "/tmp/hg-tree-bench.XXXXXX";
    if (mkdtemp(path) == nullptr) {
      std::perror("mkdtemp");
      std::exit(1);
    }
    path_ = path;
    fd_ = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~TempDir() {
    close(fd_);
    nftw(
        path_.c_str(),
        [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
};

TempDir& Scratch() {
  static TempDir dir;
  return dir;
}

std::string UniqueName(const char* prefix) {
  static std::atomic<int> counter{0};
  return std::string(prefix) + "-" + std::to_string(counter.fetch_add(1));
}

// ---------------------------------------------------------------------------------------------
// Simulated glibc malloc: chunks of (request + 8) rounded up to 16 (min 32), user address = chunk
// + 16. Freed chunks go to per-size LIFO lists (tcache/fastbin behaviour: the next request of that
// size gets the most recently freed address); otherwise the arena's top is bumped. Arena 0 is the
// main (brk) arena: one contiguous region after the executable. Other arenas are chains of 64 MiB
// aligned heaps at mmap addresses, each new heap below the previous one, as glibc maps them.
class SimArena {
 public:
  explicit SimArena(int index) : index_(index) {
    if (index == 0) {
      top_ = 0x555555559000ull + 0x290;  // the main arena starts after the program's .bss
      end_ = ~0ull;
    } else {
      heap_ = 0x7f0000000000ull - uint64_t(index) * 0x100000000ull;  // 4 GiB apart per arena
      top_ = heap_ + 0x8b0;                                          // heap_info + malloc_state
      end_ = heap_ + kHeapSize;
    }
    bins_.resize(kMaxChunk / 16 + 1);
  }

  static uint64_t ChunkSize(uint64_t request) {
    uint64_t c = (request + 8 + 15) & ~uint64_t{15};
    return c < 32 ? 32 : c;
  }

  uint64_t Alloc(uint64_t request) {
    uint64_t chunk = ChunkSize(request);
    auto& bin = bins_[chunk / 16];
    if (!bin.empty()) {
      uint64_t a = bin.back();
      bin.pop_back();
      return a;
    }
    if (top_ + chunk > end_) {  // next heap of this arena: 64 MiB lower
      heap_ -= kHeapSize;
      top_ = heap_ + 0x20;
      end_ = heap_ + kHeapSize;
    }
    uint64_t a = top_ + 16;
    top_ += chunk;
    return a;
  }

  void Free(uint64_t address, uint64_t request) {
    bins_[ChunkSize(request) / 16].push_back(address);
  }

 private:
  static constexpr uint64_t kHeapSize = 64ull << 20;
  static constexpr uint64_t kMaxChunk = 4096 + 32;
  int index_;
  uint64_t heap_ = 0, top_ = 0, end_ = 0;
  std::vector<std::vector<uint64_t>> bins_;
};

// Small-biased request sizes, 16 B .. 4 KiB: 50% 16-64, 30% 64-256, 15% 256-1024, 5% 1-4 KiB.
uint64_t RequestSize(uint64_t& rng) {
  uint64_t r = Mix(rng);
  uint64_t bucket = r % 100;
  uint64_t lo = bucket < 50 ? 16 : bucket < 80 ? 64 : bucket < 95 ? 256 : 1024;
  return lo + (r >> 32) % (lo * 3);
}

struct Op {
  uint64_t free_address;
  // The index of the freed block in the thread's live set, which the new one takes.
  uint64_t victim;
  BlockRecord block;
};

// One thread's trace: the blocks of its initial working set, `ops` churn pairs, and the blocks
// live at the end (to drain the container back to empty).
struct AddressTrace {
  std::vector<BlockRecord> fill;
  std::vector<Op> ops;
  std::vector<uint64_t> final_live;
};

// Victims: kUniform frees a uniformly random live block (no temporal locality: the splay tree's
// worst case); kRecent frees, 3 times in 4, one of the 16 blocks allocated last (short-lived
// temporaries, as most programs have) and otherwise a random one.
enum class Pattern { kUniform, kRecent };

AddressTrace MakeTrace(int arena, uint64_t live, int64_t ops, uint64_t seed,
                       Pattern pattern = Pattern::kUniform) {
  AddressTrace t;
  SimArena sim(arena);
  uint64_t rng = seed * 7919 + uint64_t(arena);
  uint32_t seq = 0;
  auto make = [&](uint64_t size) {
    BlockRecord b;
    b.size = size;
    b.address = sim.Alloc(size);
    b.stack = 1 + uint32_t(Mix(rng) % 50000);
    b.seq = ++seq;
    b.function = AllocFunction::kMalloc;
    return b;
  };
  std::vector<BlockRecord> slots;
  slots.reserve(live);
  for (uint64_t i = 0; i < live; ++i) slots.push_back(make(RequestSize(rng)));
  t.fill = slots;
  t.ops.reserve(size_t(ops));
  uint64_t recent[16] = {};
  for (int i = 0; i < 16; ++i) recent[i] = live - 1 - uint64_t(i) % live;
  for (int64_t i = 0; i < ops; ++i) {
    uint64_t r = Mix(rng);
    uint64_t victim =
        pattern == Pattern::kRecent && r % 4 != 0 ? recent[(r >> 8) % 16] : (r >> 8) % live;
    recent[i % 16] = victim;  // the slot of the block allocated now
    Op op;
    op.free_address = slots[victim].address;
    op.victim = victim;
    sim.Free(slots[victim].address, slots[victim].size);
    op.block = make(RequestSize(rng));
    slots[victim] = op.block;
    t.ops.push_back(op);
  }
  for (const auto& b : slots) t.final_live.push_back(b.address);
  return t;
}

const AddressTrace& TraceFor(int arena, uint64_t live, Pattern pattern = Pattern::kUniform) {
  static std::mutex mu;
  static std::map<std::tuple<int, uint64_t, Pattern>, std::unique_ptr<AddressTrace>> traces;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = traces[{arena, live, pattern}];
  if (!slot) {
    slot = std::make_unique<AddressTrace>(MakeTrace(arena, live, kOpsPerThread, 42, pattern));
  }
  return *slot;
}

// ---------------------------------------------------------------------------------------------
// Containers.

class SplayImpl {
 public:
  explicit SplayImpl(uint32_t shard_shift) {
    tree_ = std::make_unique<VmRegionTree>();
    // The old heap tree's defaults: 64 shards of up to 2^22 nodes.
    if (!tree_->Create(Scratch().fd(), UniqueName("tree").c_str(), 64, 22, shard_shift)) {
      std::perror("VmRegionTree::Create");
      std::exit(1);
    }
  }
  struct Handle {};
  void Insert(const BlockRecord& b, uint32_t, Handle*) { tree_->Insert(b); }
  void Remove(Handle, uint64_t address) { tree_->Remove(address, nullptr); }
  uint64_t LiveCount() const { return tree_->LiveCount(); }
  uint64_t MetadataBytes() const { return tree_->ReservedBytes(); }

  // Per-shard in-order walks (each shard is sorted), then a 64-way merge by a binary heap.
  template <typename Visit>
  void VisitMerged(Visit&& visit) {
    uint32_t n = tree_->shard_count();
    runs_.resize(n);
    for (uint32_t i = 0; i < n; ++i) CollectShard(i, &runs_[i]);
    struct Head {
      uint64_t address;
      uint32_t run;
      uint32_t pos;
    };
    std::vector<Head> heap;
    heap.reserve(n);
    auto greater = [](const Head& a, const Head& b) { return a.address > b.address; };
    for (uint32_t i = 0; i < n; ++i)
      if (!runs_[i].empty()) heap.push_back({runs_[i][0].address, i, 0});
    std::make_heap(heap.begin(), heap.end(), greater);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), greater);
      Head& h = heap.back();
      visit(runs_[h.run][h.pos]);
      if (++h.pos < runs_[h.run].size()) {
        h.address = runs_[h.run][h.pos].address;
        std::push_heap(heap.begin(), heap.end(), greater);
      } else {
        heap.pop_back();
      }
    }
  }

  // Every shard's blocks into one array, then sort by address.
  template <typename Visit>
  void VisitSorted(Visit&& visit) {
    all_.clear();
    all_.reserve(LiveCount());
    for (uint32_t i = 0; i < tree_->shard_count(); ++i) {
      auto& shard = tree_->shard(i);
      stack_.resize(shard.live_count() + 1);
      shard.ForEachInOrder(stack_.data(), stack_.size(),
                           [&](const BlockRecord& b) { all_.push_back(b); });
    }
    std::sort(all_.begin(), all_.end(),
              [](const BlockRecord& a, const BlockRecord& b) { return a.address < b.address; });
    for (const auto& b : all_) visit(b);
  }

 private:
  void CollectShard(uint32_t i, std::vector<BlockRecord>* out) {
    auto& shard = tree_->shard(i);
    out->clear();
    out->reserve(shard.live_count());
    stack_.resize(shard.live_count() + 1);
    shard.ForEachInOrder(stack_.data(), stack_.size(),
                         [&](const BlockRecord& b) { out->push_back(b); });
  }

  std::unique_ptr<VmRegionTree> tree_;
  std::vector<std::vector<BlockRecord>> runs_;
  std::vector<BlockRecord> all_;
  std::vector<uint32_t> stack_;
};

// The recorder's heap tree: slab shards, a thread's blocks in its own shard, each block's slot kept
// by the caller (the recorder keeps it in the block's tag; here the harness keeps it in an array).
class SlabImpl {
 public:
  SlabImpl() {
    tree_ = std::make_unique<LiveAllocationTree>();
    // The recorder's defaults (heap/config/Config.h): 64 shards of up to 2^22 slots.
    if (!tree_->Create(Scratch().fd(), UniqueName("slab").c_str(), 64, 22)) {
      std::perror("LiveAllocationTree::Create");
      std::exit(1);
    }
  }
  using Handle = LiveAllocationTree::Slot;
  void Insert(const BlockRecord& b, uint32_t thread, Handle* slot) {
    tree_->Insert(b, thread, slot);
  }
  void Remove(Handle slot, uint64_t address) { tree_->Remove(slot, address, nullptr); }
  uint64_t LiveCount() const { return tree_->LiveCount(); }
  uint64_t MetadataBytes() const { return tree_->ReservedBytes(); }

  // Every shard's blocks (slot order) into one array, then sort by address, as LeakScan does.
  template <typename Visit>
  void VisitSorted(Visit&& visit) {
    all_.clear();
    all_.reserve(LiveCount());
    for (uint32_t i = 0; i < tree_->shard_count(); ++i) {
      tree_->shard(i).ForEach([&](const BlockRecord& b) { all_.push_back(b); });
    }
    std::sort(all_.begin(), all_.end(),
              [](const BlockRecord& a, const BlockRecord& b) { return a.address < b.address; });
    for (const auto& b : all_) visit(b);
  }

 private:
  std::unique_ptr<LiveAllocationTree> tree_;
  std::vector<BlockRecord> all_;
};

struct NullImpl {
  uint64_t sink = 0;
  struct Handle {};
  void Insert(const BlockRecord& b, uint32_t, Handle*) { sink += b.address; }
  void Remove(Handle, uint64_t address) { sink ^= address; }
  uint64_t LiveCount() const { return 0; }
  uint64_t MetadataBytes() const { return 0; }
};

template <typename Impl>
std::unique_ptr<Impl> MakeImpl(uint32_t shard_shift) {
  if constexpr (std::is_same_v<Impl, SplayImpl>) {
    return std::make_unique<SplayImpl>(shard_shift);
  } else {
    return std::make_unique<Impl>();
  }
}

// ---------------------------------------------------------------------------------------------
// Churn: one fixture per (container, live, threads), reused across repetitions (each run fills,
// churns and drains it back to empty, so every repetition starts from the same state).

template <typename Impl>
struct ChurnFixture {
  std::unique_ptr<Impl> impl;
  std::unique_ptr<std::barrier<>> sync;
  double bytes_per_block = 0;
};

template <typename Impl>
ChurnFixture<Impl>& FixtureFor(const std::string& key, uint32_t shard_shift, int threads) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ChurnFixture<Impl>>> fixtures;
  std::lock_guard<std::mutex> lock(mu);
  auto& f = fixtures[key];
  if (!f) {
    f = std::make_unique<ChurnFixture<Impl>>();
    f->impl = MakeImpl<Impl>(shard_shift);
    f->sync = std::make_unique<std::barrier<>>(threads);
  }
  return *f;
}

template <typename Impl>
void BM_Churn(benchmark::State& state, const char* name, uint32_t shard_shift,
              Pattern pattern = Pattern::kUniform) {
  const uint64_t live_total = uint64_t(state.range(0));
  const int threads = state.threads();
  const int index = state.thread_index();
  std::string key = std::string(name) + "/" + std::to_string(live_total) + "/" +
                    std::to_string(threads) + (pattern == Pattern::kRecent ? "/recent" : "");
  ChurnFixture<Impl>& f = FixtureFor<Impl>(key, shard_shift, threads);
  // Thread t allocates from arena t (the main arena for thread 0), as glibc gives threads arenas.
  const AddressTrace& trace = TraceFor(index, live_total / uint64_t(threads), pattern);
  Impl& impl = *f.impl;
  const uint32_t thread = static_cast<uint32_t>(index);
  std::vector<typename Impl::Handle> handles(trace.fill.size());
  for (size_t i = 0; i < trace.fill.size(); ++i) impl.Insert(trace.fill[i], thread, &handles[i]);

  const Op* op = trace.ops.data();
  std::chrono::steady_clock::time_point start;
  bool first = true;
  for (auto _ : state) {
    if (__builtin_expect(first, 0)) {
      start = std::chrono::steady_clock::now();
      first = false;
    }
    impl.Remove(handles[op->victim], op->free_address);
    impl.Insert(op->block, thread, &handles[op->victim]);
    ++op;
  }
  auto end = std::chrono::steady_clock::now();
  int64_t pairs = op - trace.ops.data();
  double ns = std::chrono::duration<double, std::nano>(end - start).count();
  state.counters["ns_per_pair"] =
      benchmark::Counter(ns / double(pairs), benchmark::Counter::kAvgThreads);

  f.sync->arrive_and_wait();  // everyone done churning: the live set is complete
  if (index == 0) {
    uint64_t live = impl.LiveCount();
    f.bytes_per_block = live == 0 ? 0 : double(impl.MetadataBytes()) / double(live);
    if (!std::is_same_v<Impl, NullImpl> &&
        live != live_total / uint64_t(threads) * uint64_t(threads)) {
      state.SkipWithError("live count mismatch");
    }
  }
  f.sync->arrive_and_wait();
  state.counters["bytes_per_block"] =
      benchmark::Counter(f.bytes_per_block, benchmark::Counter::kAvgThreads);
  // Drain back to empty (the block addresses live after the trace).
  for (size_t i = 0; i < trace.final_live.size(); ++i) impl.Remove(handles[i], trace.final_live[i]);
}

// ---------------------------------------------------------------------------------------------
// Ordered iteration over 1M live blocks (after 500k churn pairs, so the layout is not pristine).

template <typename Impl>
Impl& OrderedFixture(uint32_t shard_shift) {
  static std::unique_ptr<Impl> impl;
  if (!impl) {
    impl = MakeImpl<Impl>(shard_shift);
    const AddressTrace& trace = TraceFor(0, 1'000'000);
    std::vector<typename Impl::Handle> handles(trace.fill.size());
    for (size_t i = 0; i < trace.fill.size(); ++i) impl->Insert(trace.fill[i], 0, &handles[i]);
    for (size_t i = 0; i < 500'000; ++i) {
      const Op& op = trace.ops[i];
      impl->Remove(handles[op.victim], op.free_address);
      impl->Insert(op.block, 0, &handles[op.victim]);
    }
  }
  return *impl;
}

template <typename Impl, bool kMerge>
void BM_Ordered(benchmark::State& state) {
  Impl& impl = OrderedFixture<Impl>(LiveAllocationTree::kDefaultShardShift);
  uint64_t visited = 0;
  for (auto _ : state) {
    uint64_t last = 0, n = 0, sum = 0;
    bool ordered = true;
    auto visit = [&](const BlockRecord& b) {
      ordered &= b.address > last;
      last = b.address;
      sum += b.size;
      ++n;
    };
    if constexpr (kMerge) {
      impl.VisitMerged(visit);
    } else {
      impl.VisitSorted(visit);
    }
    if (!ordered) state.SkipWithError("not in address order");
    benchmark::DoNotOptimize(sum);
    visited += n;
  }
  state.counters["live"] = double(impl.LiveCount());
  state.counters["ns_per_block"] = benchmark::Counter(
      double(visited), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_block"] = double(impl.MetadataBytes()) / double(impl.LiveCount());
}

// ---------------------------------------------------------------------------------------------
// A correctness check of the alternatives against std::map before any timing.

template <typename Impl>
bool CheckAgainstMap(const char* name) {
  auto impl = MakeImpl<Impl>(LiveAllocationTree::kDefaultShardShift);
  std::map<uint64_t, uint64_t> ref;
  const AddressTrace t = MakeTrace(3, 5000, 200'000, 7);
  std::vector<typename Impl::Handle> handles(t.fill.size());
  for (size_t i = 0; i < t.fill.size(); ++i) {
    impl->Insert(t.fill[i], 0, &handles[i]);
    ref[t.fill[i].address] = t.fill[i].size;
  }
  for (const auto& op : t.ops) {
    impl->Remove(handles[op.victim], op.free_address);
    ref.erase(op.free_address);
    impl->Insert(op.block, 0, &handles[op.victim]);
    ref[op.block.address] = op.block.size;
  }
  std::vector<std::pair<const uint64_t, uint64_t>> got;
  impl->VisitSorted([&](const BlockRecord& b) { got.push_back({b.address, b.size}); });
  bool ok = got.size() == ref.size() && std::equal(got.begin(), got.end(), ref.begin());
  std::fprintf(stderr, "self-check %s: %s (%zu live)\n", name, ok ? "ok" : "MISMATCH", got.size());
  return ok;
}

void Register() {
  for (int64_t live : {10'000, 1'000'000}) {
    for (int threads : {1, 2}) {
      auto setup = [&](benchmark::internal::Benchmark* b) {
        b->Arg(live)
            ->Threads(threads)
            ->Iterations(kOpsPerThread)
            ->UseRealTime()
            ->Unit(benchmark::kNanosecond);
      };
      const auto uniform = Pattern::kUniform;
      setup(benchmark::RegisterBenchmark("BM_Churn/null", BM_Churn<NullImpl>, "null", 0u, uniform));
      setup(benchmark::RegisterBenchmark("BM_Churn/splay", BM_Churn<SplayImpl>, "splay",
                                         LiveAllocationTree::kDefaultShardShift, uniform));
      setup(benchmark::RegisterBenchmark("BM_Churn/splay_s26", BM_Churn<SplayImpl>, "splay_s26",
                                         26u, uniform));
      setup(
          benchmark::RegisterBenchmark("BM_Churn/slab", BM_Churn<SlabImpl>, "slab", 12u, uniform));
    }
  }
  for (int64_t live : {10'000, 1'000'000}) {
    auto setup = [&](benchmark::internal::Benchmark* b) {
      b->Arg(live)->Iterations(kOpsPerThread)->UseRealTime()->Unit(benchmark::kNanosecond);
    };
    setup(benchmark::RegisterBenchmark("BM_ChurnRecent/splay", BM_Churn<SplayImpl>, "splay",
                                       LiveAllocationTree::kDefaultShardShift, Pattern::kRecent));
    setup(benchmark::RegisterBenchmark("BM_ChurnRecent/slab", BM_Churn<SlabImpl>, "slab", 12u,
                                       Pattern::kRecent));
  }
  auto ordered = [](benchmark::internal::Benchmark* b) {
    b->Arg(1'000'000)->Unit(benchmark::kMillisecond)->MinTime(1.0);
  };
  ordered(benchmark::RegisterBenchmark("BM_Ordered/splay_merge", BM_Ordered<SplayImpl, true>));
  ordered(benchmark::RegisterBenchmark("BM_Ordered/splay_sort", BM_Ordered<SplayImpl, false>));
  ordered(benchmark::RegisterBenchmark("BM_Ordered/slab_sort", BM_Ordered<SlabImpl, false>));
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = CheckAgainstMap<SplayImpl>("splay") && CheckAgainstMap<SlabImpl>("slab");
  if (!ok) return 1;
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
