// tests/heap: VmRegionTree (the splay-shard tree of vm.tree, format version 1): what only it does,
// Floor(). What it shares with LiveAllocationTree is tested in ShardedTreeTest.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "heap/store/PersistedFormat.h"
#include "heap/store/VmRegionTree.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using format::AllocFunction;

TEST(VmRegionTreeTest, FloorLooksOnlyWithinTheShardOfTheAddress) {
  TempDir dir;
  auto tree = std::make_unique<VmRegionTree>();  // 1024 shards inline: off the stack
  ASSERT_TRUE(tree->Create(dir.fd(), "vm.tree", 2, 10));
  BlockRecord region{.address = 0x10000, .size = 0x1000, .function = AllocFunction::kMmap};
  ASSERT_TRUE(tree->Insert(region));  // shard 0
  BlockRecord found;
  ASSERT_TRUE(tree->Floor(0x10800, &found));  // same 4 KiB window
  EXPECT_EQ(0x10000u, found.address);
  EXPECT_FALSE(tree->Floor(0x11000, &found));  // the next window is shard 1
  ASSERT_TRUE(tree->Floor(0x12000, &found));   // shard 0 again
  EXPECT_EQ(0x10000u, found.address);
}

// The recorder's use: one shard, so that Floor() finds the region under any address (partial
// munmap/mremap look up the region holding their first and last byte).
TEST(VmRegionTreeTest, FloorInOneShardFindsTheRegionBelowAnyAddress) {
  TempDir dir;
  auto tree = std::make_unique<VmRegionTree>();
  ASSERT_TRUE(tree->Create(dir.fd(), "vm.tree", 1, 10));
  for (uint64_t address : {0x10000ull, 0x20000ull, 0x7f00'0000'0000ull}) {
    ASSERT_TRUE(
        tree->Insert({.address = address, .size = 0x3000, .function = AllocFunction::kMmap}));
  }
  BlockRecord found;
  EXPECT_FALSE(tree->Floor(0xffff, &found));
  ASSERT_TRUE(tree->Floor(0x12fff, &found));
  EXPECT_EQ(0x10000u, found.address);
  EXPECT_EQ(0x3000u, found.size);
  ASSERT_TRUE(tree->Floor(0x20000, &found));
  EXPECT_EQ(0x20000u, found.address);
  ASSERT_TRUE(tree->Floor(0x7eff'ffff'ffff, &found));
  EXPECT_EQ(0x20000u, found.address);
  ASSERT_TRUE(tree->Floor(0x7fff'ffff'ffff, &found));
  EXPECT_EQ(0x7f00'0000'0000u, found.address);
}

}  // namespace
}  // namespace heapgraph
