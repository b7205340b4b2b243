// bench/: the identify pass of BlockReader and GnuObjcReader (scanner/types/) per live block, on
// real GNUstep objects and heap Blocks, against the same pass over plain malloc blocks of the same
// sizes (nothing to type: every reader rejects every block), in the same run. Google Benchmark;
// needs the test fixtures (libobjc_fixtures.so, libblock_shapes_O2.so). See docs/performance.md.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "scanner/types/BlockReader.h"
#include "scanner/types/GnuObjcReader.h"
#include "scanner/types/ReaderSet.h"

namespace heapgraph::scanner::types {
namespace {

constexpr int kObjects = 100000;  // of each kind: ObjC objects and heap Blocks

struct Heap {
  std::vector<BlockRange> typed;  // GNUstep objects (from the header) and heap Blocks
  std::vector<BlockRange> plain;  // malloc blocks of the same sizes, zero-filled
  std::vector<void*> plain_memory;
};

Heap& TheHeap() {
  static Heap* heap = [] {
    static char home[] = "/tmp/hg_gnustep_home_XXXXXX";
    if (mkdtemp(home) != nullptr) setenv("HOME", home, 1), setenv("GNUSTEP_USER_ROOT", home, 1);
    // The Blocks library first: GNUstep Base exports a Blocks runtime of its own whose _Block_copy
    // does not copy clang 14's blocks (docs/typed-readers-objc-blocks.md).
    void* shapes = dlopen(BLOCK_SHAPES, RTLD_NOW | RTLD_GLOBAL);
    void* objc = dlopen(OBJC_FIXTURES, RTLD_NOW | RTLD_GLOBAL);
    if (objc == nullptr || shapes == nullptr) {
      std::fprintf(stderr, "objc_blocks_identify_bench: %s\n", dlerror());
      std::exit(1);
    }
    auto owner = reinterpret_cast<void* (*)()>(dlsym(objc, "hg_fixture_owner"));
    auto block = reinterpret_cast<void* (*)(void*)>(dlsym(shapes, "shape_object"));
    auto* h = new Heap;
    for (int i = 0; i < kObjects; ++i) {
      char* o = static_cast<char*>(owner()) - GnuObjcReader::kGnustepHeaderBytes;
      h->typed.push_back({uint64_t(o), malloc_usable_size(o)});
      void* b = block(o);
      h->typed.push_back({uint64_t(b), malloc_usable_size(b)});
    }
    for (const BlockRange& r : h->typed) {
      void* p = calloc(1, r.size);
      h->plain_memory.push_back(p);
      h->plain.push_back({uint64_t(p), r.size});
    }
    return h;
  }();
  return *heap;
}

void Identify(benchmark::State& state, const std::vector<BlockRange>& blocks) {
  std::vector<BlockRange> sorted = blocks;
  std::sort(sorted.begin(), sorted.end(),
            [](const BlockRange& a, const BlockRange& b) { return a.begin < b.begin; });
  BlockIndex index(
      std::vector<BlockRange, MmapAllocator<BlockRange>>(sorted.begin(), sorted.end()));
  ReaderSet set;
  set.Add(std::make_unique<BlockReader>());
  set.Add(std::make_unique<GnuObjcReader>());
  set.Prepare();
  SnapshotMemory memory(index, set.modules());
  std::vector<TypeIdentity> identities(sorted.size());
  size_t typed = 0;
  for (auto _ : state) {
    set.IdentifyAll(memory, identities);
    typed = size_t(std::count_if(identities.begin(), identities.end(),
                                 [](const TypeIdentity& t) { return t.typed(); }));
    benchmark::DoNotOptimize(identities.data());
  }
  state.counters["typed"] = double(typed);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(sorted.size()));
}

void BM_IdentifyObjcAndBlocks(benchmark::State& state) {
  Identify(state, TheHeap().typed);
}
void BM_IdentifyPlainBlocks(benchmark::State& state) {
  Identify(state, TheHeap().plain);
}

// Prepare with both readers (module segments, Blocks symbols and GOT slots, the ObjC class
// catalog with every class's ivars), before the world stops; for scale, with no readers.
void Prepare(benchmark::State& state, bool readers) {
  TheHeap();
  for (auto _ : state) {
    ReaderSet set;
    if (readers) {
      set.Add(std::make_unique<BlockReader>());
      set.Add(std::make_unique<GnuObjcReader>());
    }
    set.Prepare();
    benchmark::DoNotOptimize(set.size());
  }
}
void BM_PrepareNoReaders(benchmark::State& state) {
  Prepare(state, false);
}
void BM_PrepareBlocksAndObjc(benchmark::State& state) {
  Prepare(state, true);
}

BENCHMARK(BM_PrepareNoReaders)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrepareBlocksAndObjc)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IdentifyPlainBlocks)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IdentifyObjcAndBlocks)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace heapgraph::scanner::types

BENCHMARK_MAIN();
