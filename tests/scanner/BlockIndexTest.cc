#include <gtest/gtest.h>

#include <map>
#include <random>

#include "scanner/BlockIndex.h"

namespace heapgraph::scanner {
namespace {

using Blocks = std::vector<BlockRange, MmapAllocator<BlockRange>>;

// Reference answer: the block containing `a` by a walk over a std::map.
uint32_t Naive(const Blocks& blocks, uint64_t a) {
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    uint64_t end = blocks[i].begin + (blocks[i].size == 0 ? 1 : blocks[i].size);
    if (a >= blocks[i].begin && a < end) return i;
  }
  return BlockIndex::kNotFound;
}

TEST(BlockIndexTest, EmptyIndexFindsNothing) {
  BlockIndex index{Blocks{}};
  EXPECT_EQ(index.Find(0x1000), BlockIndex::kNotFound);
  EXPECT_EQ(index.size(), 0u);
}

TEST(BlockIndexTest, FindsInteriorAndStartPointers) {
  Blocks blocks = {{0x10000, 32}, {0x10020, 16}, {0x10040, 4096}, {0x20000, 0}};
  BlockIndex index(blocks);
  EXPECT_EQ(index.Find(0x10000), 0u);
  EXPECT_EQ(index.Find(0x1001f), 0u);
  EXPECT_EQ(index.Find(0x10020), 1u);
  EXPECT_EQ(index.Find(0x10030), BlockIndex::kNotFound);
  EXPECT_EQ(index.Find(0x11000), 2u);  // interior, on the next page
  EXPECT_EQ(index.Find(0x20000), 3u);  // size 0: its start only
  EXPECT_EQ(index.Find(0x20001), BlockIndex::kNotFound);
  EXPECT_EQ(index.FindStart(0x10048), BlockIndex::kNotFound);
  EXPECT_EQ(index.FindStart(0x10040), 2u);
}

TEST(BlockIndexTest, LargeBlocksAndDistantArenasMakeSeparateRegions) {
  Blocks blocks = {{0x100000, 64},
                   {0x100040, 64},
                   {0x200000, 8 << 20},
                   {0x7f0000000000, 48},
                   {0x7f0000000040, 48}};
  BlockIndex index(blocks);
  EXPECT_EQ(index.region_count(), 3u);
  EXPECT_EQ(index.Find(0x200000 + (5 << 20)), 2u);
  EXPECT_EQ(index.Find(0x7f0000000050), 4u);
  EXPECT_EQ(index.Find(0x3000000000), BlockIndex::kNotFound);
}

TEST(BlockIndexTest, AgreesWithNaiveLookupOnRandomHeaps) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    Blocks blocks;
    uint64_t at = 0x555500000000 + (rng() % 4096) * 16;
    for (int i = 0; i < 500; ++i) {
      uint64_t size = (rng() % 8 == 0) ? rng() % (3 << 20) : (rng() % 512) * 16;
      blocks.push_back({at, size});
      at += (size == 0 ? 16 : (size + 15) / 16 * 16) + (rng() % 4 == 0 ? (rng() % (4 << 20)) : 16);
    }
    BlockIndex index(blocks);
    for (int q = 0; q < 5000; ++q) {
      const BlockRange& b = blocks[rng() % blocks.size()];
      uint64_t a = b.begin + (rng() % (b.size + 64)) - 32;
      ASSERT_EQ(index.Find(a), Naive(blocks, a)) << "address " << a;
    }
  }
}

}  // namespace
}  // namespace heapgraph::scanner
