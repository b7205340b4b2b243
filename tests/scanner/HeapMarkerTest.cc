#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "scanner/HeapMarker.h"

namespace heapgraph::scanner {
namespace {

using Blocks = std::vector<BlockRange, MmapAllocator<BlockRange>>;

// Real malloc'd blocks of 64 bytes (8 pointer slots), indexed in address order.
class HeapMarkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 8; ++i) blocks_.push_back(static_cast<uint64_t*>(calloc(8, 8)));
    std::sort(blocks_.begin(), blocks_.end());
    Blocks ranges;
    for (uint64_t* b : blocks_) ranges.push_back({reinterpret_cast<uint64_t>(b), 64});
    index_ = std::make_unique<BlockIndex>(ranges);
  }
  void TearDown() override {
    for (uint64_t* b : blocks_) free(b);
  }
  uint64_t Addr(int i, int offset = 0) { return reinterpret_cast<uint64_t>(blocks_[i]) + offset; }

  std::vector<uint64_t*> blocks_;
  std::unique_ptr<BlockIndex> index_;
};

TEST_F(HeapMarkerTest, MarksTransitivelyFromARoot) {
  blocks_[0][3] = Addr(1);
  blocks_[1][0] = Addr(2, 40);  // interior pointer
  blocks_[5][0] = Addr(6);      // unreachable chain
  uint64_t root[2] = {0, Addr(0)};
  HeapMarker marker(*index_);
  marker.ScanRoot(reinterpret_cast<uint64_t>(root), reinterpret_cast<uint64_t>(root + 2));
  marker.Propagate();
  EXPECT_TRUE(marker.marked(0));
  EXPECT_TRUE(marker.marked(1));
  EXPECT_TRUE(marker.marked(2));
  EXPECT_FALSE(marker.marked(5));
  EXPECT_FALSE(marker.marked(6));
  EXPECT_EQ(marker.stats().marked_blocks, 3u);
}

TEST_F(HeapMarkerTest, StartOnlyModeIgnoresInteriorPointers) {
  uint64_t root[2] = {Addr(3, 8), Addr(4)};
  HeapMarker marker(*index_, /*interior_pointers=*/false);
  marker.ScanWords(root, 2);
  marker.Propagate();
  EXPECT_FALSE(marker.marked(3));
  EXPECT_TRUE(marker.marked(4));
}

// A pointer one past a block's end (a common `end` pointer) keeps that block alive; never the
// block after it, and not in start-only mode.
TEST(HeapMarkerEndPointerTest, OnePastTheEndReferencesItsOwnBlockOnly) {
  // Three 40-byte blocks 48 bytes apart, as glibc places malloc(40) chunks: 8 bytes of the next
  // chunk's header between a block's end and the next block.
  auto* area = static_cast<uint64_t*>(calloc(3 * 6, 8));
  auto at = [&](int i) { return reinterpret_cast<uint64_t>(area + 6 * i); };
  Blocks ranges = {{at(0), 40}, {at(1), 40}, {at(2), 40}};
  BlockIndex index(ranges);
  uint64_t root[1] = {at(0) + 40};  // block 0's end, 8 bytes before block 1
  HeapMarker marker(index);
  marker.ScanWords(root, 1);
  marker.Propagate();
  EXPECT_TRUE(marker.marked(0));
  EXPECT_FALSE(marker.marked(1));
  EXPECT_FALSE(marker.marked(2));
  EXPECT_EQ(marker.Target(at(2) + 40), 2u);  // the highest block's end is in range too

  HeapMarker start_only(index, /*interior_pointers=*/false);
  start_only.ScanWords(root, 1);
  start_only.Propagate();
  EXPECT_FALSE(start_only.marked(0));
  free(area);
}

// An end pointer that is also glibc's next-chunk header address (a block of 16 * k bytes) is that
// allocator metadata (main_arena.top, a bin) and references nothing.
TEST(HeapMarkerEndPointerTest, EndPointerAtTheNextChunkHeaderIsIgnored) {
  auto* area = static_cast<uint64_t*>(calloc(3 * 6, 8));
  auto at = [&](int i) { return reinterpret_cast<uint64_t>(area + 6 * i); };
  Blocks ranges = {{at(0), 32}, {at(2), 40}};
  BlockIndex index(ranges);
  uint64_t root[1] = {at(0) + 32};
  HeapMarker marker(index);
  marker.ScanWords(root, 1);
  marker.Propagate();
  EXPECT_FALSE(marker.marked(0));
  free(area);
}

TEST_F(HeapMarkerTest, CyclesTerminate) {
  blocks_[2][0] = Addr(3);
  blocks_[3][0] = Addr(2);
  uint64_t root = Addr(2);
  HeapMarker marker(*index_);
  marker.ScanWords(&root, 1);
  marker.Propagate();
  EXPECT_TRUE(marker.marked(2));
  EXPECT_TRUE(marker.marked(3));
  EXPECT_EQ(marker.stats().marked_blocks, 2u);
}

TEST_F(HeapMarkerTest, UnreadablePagesInARootAreSkippedAndCounted) {
  long page = sysconf(_SC_PAGESIZE);
  auto* area = static_cast<uint8_t*>(
      mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(area, MAP_FAILED);
  reinterpret_cast<uint64_t*>(area)[0] = Addr(0);
  reinterpret_cast<uint64_t*>(area + 2 * page)[5] = Addr(7);
  ASSERT_EQ(mprotect(area + page, page, PROT_NONE), 0);
  HeapMarker marker(*index_);
  marker.ScanRoot(reinterpret_cast<uint64_t>(area), reinterpret_cast<uint64_t>(area + 3 * page));
  marker.Propagate();
  EXPECT_TRUE(marker.marked(0));
  EXPECT_TRUE(marker.marked(7));
  EXPECT_EQ(marker.stats().unreadable_pages, 1u);
  munmap(area, 3 * page);
}

TEST_F(HeapMarkerTest, ForEachReferenceListsOutgoingEdges) {
  blocks_[4][1] = Addr(5);
  blocks_[4][6] = Addr(6, 63);
  HeapMarker marker(*index_);
  std::vector<uint32_t> targets;
  marker.ForEachReference(4, [&](uint32_t j) { targets.push_back(j); });
  EXPECT_EQ(targets, (std::vector<uint32_t>{5, 6}));
}

// A large block is read only where its pages exist (a 64 MiB MAP_NORESERVE "calloc" with two
// pages written): the reference in a written page is followed, both while marking and in
// ForEachReference, and the untouched pages are skipped and counted.
TEST(HeapMarkerSparseTest, LargeBlocksAreReadOnlyWhereTheirPagesExist) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t pages = (64u << 20) / page;
  auto* big = static_cast<char*>(mmap(nullptr, pages * page, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  ASSERT_NE(big, MAP_FAILED);
  madvise(big, pages * page, MADV_NOHUGEPAGE);
  auto* small = static_cast<uint64_t*>(calloc(8, 8));
  reinterpret_cast<uint64_t*>(big + 1000 * page)[3] = reinterpret_cast<uint64_t>(small);
  big[(pages - 1) * page] = 1;
  Blocks ranges = {{reinterpret_cast<uint64_t>(big), pages * page},
                   {reinterpret_cast<uint64_t>(small), 64}};
  std::sort(ranges.begin(), ranges.end(),
            [](const BlockRange& a, const BlockRange& b) { return a.begin < b.begin; });
  const uint32_t big_index = ranges[0].begin == reinterpret_cast<uint64_t>(big) ? 0 : 1;
  BlockIndex index(ranges);
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read());
  PresentPages present(mappings);
  HeapMarker marker(index, true, nullptr, &present);
  uint64_t root = reinterpret_cast<uint64_t>(big);
  marker.ScanWords(&root, 1);
  marker.Propagate();
  EXPECT_TRUE(marker.marked(1 - big_index));
  EXPECT_EQ(marker.stats().absent_pages, pages - 2);
  EXPECT_EQ(marker.stats().heap_words, 2 * page / 8 + 8);  // two pages of the big block, small
  std::vector<uint32_t> targets;
  marker.ForEachReference(big_index, [&](uint32_t j) { targets.push_back(j); });
  EXPECT_EQ(targets, (std::vector<uint32_t>{1 - big_index}));
  free(small);
  munmap(big, pages * page);
}

// Lookups are resolved in batches with prefetches between stages: many candidates per block, long
// chains, partial batches left when the work list runs dry, and words that point nowhere must
// give exactly the marks of a plain depth-first walk.
TEST(HeapMarkerBatchTest, MarksExactlyTheReachableBlocksOfALargeRandomGraph) {
  constexpr int kBlocks = 5000;
  std::vector<uint64_t*> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(static_cast<uint64_t*>(calloc(8, 8)));
  std::sort(blocks.begin(), blocks.end());
  uint64_t seed = 42;
  auto next = [&seed] {
    return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33;
  };
  // Blocks 0..kBlocks/2 form a random graph with 3 edges each (interior pointers and non-pointers
  // mixed in); the other half point into the first half only, so they stay unreachable.
  for (int i = 0; i < kBlocks; ++i) {
    for (int w = 0; w < 3; ++w) {
      uint64_t target = next() % (kBlocks / 2);
      blocks[i][w] = reinterpret_cast<uint64_t>(blocks[target]) + 8 * (next() % 8);
    }
    blocks[i][3] = next();  // most likely not a pointer
  }
  Blocks ranges;
  for (uint64_t* b : blocks) ranges.push_back({reinterpret_cast<uint64_t>(b), 64});
  BlockIndex index(ranges);
  uint64_t root[3] = {reinterpret_cast<uint64_t>(blocks[0]), 7,
                      reinterpret_cast<uint64_t>(blocks[1])};
  HeapMarker marker(index);
  marker.ScanWords(root, 3);
  marker.Propagate();

  std::vector<uint8_t> expected(kBlocks, 0);
  std::vector<uint32_t> work;
  for (uint64_t r : root) {
    uint32_t b = index.Find(r);
    if (b != BlockIndex::kNotFound && !expected[b]) expected[b] = 1, work.push_back(b);
  }
  while (!work.empty()) {
    uint32_t b = work.back();
    work.pop_back();
    for (int w = 0; w < 8; ++w) {
      uint32_t t = index.Find(blocks[b][w]);
      if (t != BlockIndex::kNotFound && !expected[t]) expected[t] = 1, work.push_back(t);
    }
  }
  uint64_t reachable = 0;
  for (uint32_t i = 0; i < kBlocks; ++i) {
    EXPECT_EQ(marker.marked(i), expected[i] != 0) << "block " << i;
    reachable += expected[i];
  }
  EXPECT_EQ(marker.stats().marked_blocks, reachable);
  EXPECT_GT(reachable, 100u);
  EXPECT_LT(reachable, static_cast<uint64_t>(kBlocks));
  for (uint64_t* b : blocks) free(b);
}

}  // namespace
}  // namespace heapgraph::scanner
