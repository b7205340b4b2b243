// bench/: the marker's pointer lookup in isolation (docs/performance.md, "Leak scan"). Marking a
// 4M-block heap spends ~70 % of its samples in scanner::BlockIndex::Find. This times Find() on a
// glibc-like layout (64-byte blocks in 80-byte chunks, a gap now and then) for random pointers to
// block starts (what the bigheap workload stores), random interior pointers and random non-pointers
// inside the heap's range, against a what-if: a table with one entry per 64-byte granule of the
// heap (the first block ending after the granule's start), then a short linear scan.
//
// Usage: leak_index_bench [BLOCKS (default 4000000)] [LOOKUPS (default 20000000)]
#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "scanner/BlockIndex.h"

namespace {

using heapgraph::scanner::BlockIndex;
using heapgraph::scanner::BlockRange;
using heapgraph::scanner::MmapAllocator;

double NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
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

// The what-if: granule g of [lowest, highest) -> first block whose end is after the granule start.
class GranuleIndex {
 public:
  static constexpr uint32_t kShift = 6;
  explicit GranuleIndex(const std::vector<BlockRange>& blocks) : blocks_(blocks) {
    lowest_ = blocks.front().begin;
    highest_ = blocks.back().begin + blocks.back().size;
    uint64_t granules = ((highest_ - lowest_) >> kShift) + 2;
    first_.resize(granules);
    uint32_t b = 0;
    for (uint64_t g = 0; g < granules; ++g) {
      uint64_t start = lowest_ + (g << kShift);
      while (b < blocks.size() && blocks[b].begin + blocks[b].size <= start) ++b;
      first_[g] = b;
    }
  }
  uint32_t Find(uint64_t address) const {
    if (address < lowest_ || address >= highest_) return BlockIndex::kNotFound;
    for (uint32_t i = first_[(address - lowest_) >> kShift]; i < blocks_.size(); ++i) {
      const BlockRange& b = blocks_[i];
      if (address < b.begin) return BlockIndex::kNotFound;
      if (address < b.begin + b.size) return i;
    }
    return BlockIndex::kNotFound;
  }
  size_t bytes() const { return first_.size() * sizeof(uint32_t); }

 private:
  const std::vector<BlockRange>& blocks_;
  std::vector<uint32_t> first_;
  uint64_t lowest_ = 0, highest_ = 0;
};

template <typename Index>
double TimeLookups(const Index& index, const std::vector<uint64_t>& queries, uint64_t* found) {
  uint64_t hits = 0;
  double start = NowNs();
  for (uint64_t q : queries) hits += index.Find(q) != BlockIndex::kNotFound;
  double ns = (NowNs() - start) / static_cast<double>(queries.size());
  *found = hits;
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], nullptr, 0) : 4000000;
  uint64_t lookups = argc > 2 ? strtoull(argv[2], nullptr, 0) : 20000000;
  Rng rng{0x9e3779b97f4a7c15ull};
  std::vector<BlockRange> blocks;
  blocks.reserve(n);
  uint64_t address = 0x555555a00010ull;
  for (uint64_t i = 0; i < n; ++i) {
    blocks.push_back({address, 64});
    address += 80;
    if (rng.Next() % 64 == 0) address += 80 * (1 + rng.Next() % 4);  // a freed chunk now and then
  }
  std::vector<BlockRange, MmapAllocator<BlockRange>> copy(blocks.begin(), blocks.end());
  double build_start = NowNs();
  BlockIndex index(std::move(copy));
  double index_build_ms = (NowNs() - build_start) / 1e6;
  build_start = NowNs();
  GranuleIndex granules(blocks);
  double granule_build_ms = (NowNs() - build_start) / 1e6;

  struct Kind {
    const char* name;
    std::vector<uint64_t> queries;
  } kinds[3] = {{"block starts", {}}, {"interior", {}}, {"non-pointers in range", {}}};
  uint64_t span = blocks.back().begin + blocks.back().size - blocks.front().begin;
  for (uint64_t i = 0; i < lookups; ++i) {
    const BlockRange& b = blocks[rng.Next() % n];
    kinds[0].queries.push_back(b.begin);
    kinds[1].queries.push_back(b.begin + 8 * (rng.Next() % 8));
    kinds[2].queries.push_back((blocks.front().begin + rng.Next() % span) | 7);
  }
  printf("%" PRIu64 " blocks of 64 B (heap span %.0f MiB); BlockIndex built in %.1f ms, granule "
         "table (%zu KiB) in %.1f ms\n",
         n, static_cast<double>(span) / (1 << 20), index_build_ms, granules.bytes() >> 10,
         granule_build_ms);
  printf("| lookups | BlockIndex::Find ns | granule table ns | found (both) |\n");
  printf("| --- | ---: | ---: | ---: |\n");
  for (const Kind& k : kinds) {
    uint64_t found_a = 0, found_b = 0;
    double a = TimeLookups(index, k.queries, &found_a);
    double b = TimeLookups(granules, k.queries, &found_b);
    printf("| %s | %.1f | %.1f | %" PRIu64 "%s |\n", k.name, a, b, found_a,
           found_a == found_b ? "" : " (MISMATCH)");
  }
  return 0;
}
