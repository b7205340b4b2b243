#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scanner/BlockIndex.h"

namespace heapgraph::scanner {
namespace {

using Blocks = std::vector<BlockRange, MmapAllocator<BlockRange>>;

// The reference lookup: the last block that begins at or below `a` (every test's blocks are
// sorted and disjoint; a zero-sized block holds its first byte), by binary search, not by the
// index's granule table (a linear scan took ≈ 35 s of the ASan pass).
uint32_t Naive(const Blocks& blocks, uint64_t a) {
  auto after = std::upper_bound(blocks.begin(), blocks.end(), a,
                                [](uint64_t x, const BlockRange& b) { return x < b.begin; });
  if (after == blocks.begin()) return BlockIndex::kNotFound;
  const BlockRange& b = *(after - 1);
  if (a >= b.begin + (b.size == 0 ? 1 : b.size)) return BlockIndex::kNotFound;
  return static_cast<uint32_t>(after - 1 - blocks.begin());
}

// FindWellInside decides only addresses of a block more than 8 bytes before its end, and then
// as Find does.
void ExpectWellInsideAgrees(const Blocks& blocks, const BlockIndex& index, uint64_t a) {
  uint32_t inside = index.FindWellInside(a);
  if (inside == BlockIndex::kUndecided) return;
  ASSERT_EQ(inside, Naive(blocks, a)) << "address " << a;
  ASSERT_LT(a + 8, blocks[inside].begin + blocks[inside].size) << "address " << a;
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

// One past a block's end names that block, even when the next block starts there (the caller
// decides which wins); an empty block has no end of its own.
TEST(BlockIndexTest, FindsTheBlockEndingAtAnAddress) {
  Blocks blocks = {{0x10000, 32}, {0x10020, 16}, {0x10040, 40}, {0x20000, 0}};
  BlockIndex index(blocks);
  EXPECT_EQ(index.FindEndingAt(0x10020), 0u);  // also block 1's start
  EXPECT_EQ(index.FindEndingAt(0x10030), 1u);
  EXPECT_EQ(index.FindEndingAt(0x10068), 2u);                     // the highest end of its region
  EXPECT_EQ(index.FindEndingAt(0x10067), BlockIndex::kNotFound);  // inside
  EXPECT_EQ(index.FindEndingAt(0x10069), BlockIndex::kNotFound);
  EXPECT_EQ(index.FindEndingAt(0x20000), BlockIndex::kNotFound);
  EXPECT_EQ(index.FindEndingAt(0x20001), BlockIndex::kNotFound);  // size 0
  EXPECT_EQ(index.FindEndingAt(0), BlockIndex::kNotFound);
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
      ExpectWellInsideAgrees(blocks, index, a);
    }
  }
}

// Queries around every block: its first and last bytes, just outside it, and random interior.
void ExpectAgreesWithNaive(const Blocks& blocks, const BlockIndex& index, std::mt19937_64& rng,
                           int queries) {
  for (int q = 0; q < queries; ++q) {
    const BlockRange& b = blocks[rng() % blocks.size()];
    uint64_t offsets[] = {0, b.size, b.size - 1, rng() % (b.size + 1)};
    for (uint64_t off : offsets) {
      for (uint64_t a : {b.begin + off, b.begin - 1, b.begin + off + 64}) {
        ASSERT_EQ(index.Find(a), Naive(blocks, a)) << "address " << a;
        ExpectWellInsideAgrees(blocks, index, a);
      }
    }
  }
}

TEST(BlockIndexTest, DenseSmallBlocksUseTheFinestGranules) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 5; ++round) {
    Blocks blocks;
    uint64_t at = 0x555500000010 + (rng() % 64) * 16;
    for (int i = 0; i < 3000; ++i) {
      uint64_t size = 16 + (rng() % 2) * 8;  // 16 or 24 bytes in 32-byte chunks, like glibc's
      blocks.push_back({at, size});
      at += 32 + (rng() % 16 == 0 ? 32 : 0);
    }
    BlockIndex index(blocks);
    uint64_t span = blocks.back().begin + blocks.back().size - blocks.front().begin;
    EXPECT_EQ(index.region_count(), 1u);
    EXPECT_EQ(index.table_bytes(), ((span - 1) / 64 + 2) * BlockIndex::kEntryBytes);
    ExpectAgreesWithNaive(blocks, index, rng, 3000);
  }
}

// The marker's common case: words pointing at the start of 64-byte blocks in 80-byte glibc chunks
// are decided by their granule entry alone.
TEST(BlockIndexTest, StartsOfDenseBlocksAreDecidedWellInside) {
  Blocks blocks;
  for (uint64_t i = 0, at = 0x555500000010; i < 1000; ++i, at += 80) blocks.push_back({at, 64});
  BlockIndex index(blocks);
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(index.FindWellInside(blocks[i].begin), i);
    EXPECT_EQ(index.FindWellInside(blocks[i].begin + 56), BlockIndex::kUndecided);  // last 8 bytes
    EXPECT_EQ(index.FindWellInside(blocks[i].begin + 64), BlockIndex::kUndecided);  // its end
  }
}

TEST(BlockIndexTest, SizesAroundTheGranuleAgreeWithNaive) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 10; ++round) {
    Blocks blocks;
    uint64_t at = 0x555500000000 + (rng() % 256) * 8;
    for (int i = 0; i < 2000; ++i) {
      uint64_t size = rng() % 4 == 0 ? 0 : 64 * (1 + rng() % 3) + (rng() % 17) - 8;
      blocks.push_back({at, size});
      at += (size == 0 ? 1 : size) + rng() % 24;  // unaligned, sometimes adjacent
    }
    BlockIndex index(blocks);
    ExpectAgreesWithNaive(blocks, index, rng, 2000);
  }
}

TEST(BlockIndexTest, SparseRegionsTakeCoarserGranulesWithinTheMemoryBound) {
  std::mt19937_64 rng(13);
  Blocks blocks;
  uint64_t at = 0x555500000000, live = 0;
  for (int cluster = 0; cluster < 40; ++cluster) {
    int count = cluster % 2 == 0 ? 1 : 64;  // lone blocks, and clusters packed in 2 KiB
    for (int i = 0; i < count; ++i) {
      blocks.push_back({at, 16});
      live += 16;
      at += 32;
    }
    at += 200 << 10;  // below kRegionGap: one sparse region
  }
  BlockIndex index(blocks);
  EXPECT_EQ(index.region_count(), 1u);
  uint64_t budget =
      BlockIndex::kTableBytesPerBlock * blocks.size() + live / BlockIndex::kLiveBytesPerTableByte;
  EXPECT_LE(index.table_bytes(), budget);
  uint64_t span = blocks.back().begin + blocks.back().size - blocks.front().begin;
  EXPECT_LT(index.table_bytes(),
            (span / 64) * BlockIndex::kEntryBytes / 8);  // far coarser than 64 B
  ExpectAgreesWithNaive(blocks, index, rng, 3000);
}

}  // namespace
}  // namespace heapgraph::scanner
