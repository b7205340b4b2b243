// tests/heap: LiveAllocationTree (the hash-shard tree of heap.tree): what only it does, the sampled
// mark (format version 3) and the RehashScratch its shards grow through. What it shares with
// VmRegionTree is tested in ShardedTreeTest.cc.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/PersistedFormat.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using format::AllocFunction;

// The tree is large (1024 HashShards inline): keep it off the stack.
std::unique_ptr<LiveAllocationTree> NewTree() {
  return std::make_unique<LiveAllocationTree>();
}

format::TreeHeader HeaderOf(const LiveAllocationTree& tree) {
  format::TreeHeader h;
  memcpy(&h, tree.file().data(), sizeof(h));
  return h;
}

TEST(LiveAllocationTreeTest, MarkSampledWritesVersion3AndTheMean) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  EXPECT_EQ(format::kHashTreeVersion, HeaderOf(*tree).file.version);
  EXPECT_EQ(0u, HeaderOf(*tree).sample_mean);
  tree->MarkSampled(4096);
  EXPECT_EQ(format::kSampledTreeVersion, HeaderOf(*tree).file.version);
  EXPECT_EQ(4096u, HeaderOf(*tree).sample_mean);
  tree->MarkSampled(0);  // a mean of 0 is a full recording
  EXPECT_EQ(format::kHashTreeVersion, HeaderOf(*tree).file.version);
  EXPECT_EQ(0u, HeaderOf(*tree).sample_mean);
}

TEST(LiveAllocationTreeTest, CreateMapsAScratchForTheLargestTable) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 12));
  EXPECT_NE(0u, tree->scratch().begin());
  EXPECT_EQ((uint64_t{1} << 12) * sizeof(format::HashSlot),
            tree->scratch().end() - tree->scratch().begin());
}

TEST(LiveAllocationTreeTest, AFailedCreateLeavesNoScratch) {
  TempDir dir;
  auto first = NewTree();
  ASSERT_TRUE(first->Create(dir.fd(), "heap.tree", 4, 10));
  auto second = NewTree();
  EXPECT_FALSE(second->Create(dir.fd(), "heap.tree", 4, 10));
  EXPECT_EQ(EEXIST, errno);
  EXPECT_EQ(0u, second->scratch().begin());
  EXPECT_EQ(0u, second->scratch().end());
}

// Every shard starts at HashShard::kInitialCapacity slots; past it the shard rehashes through the
// tree's scratch. 5,000 blocks in one shard need several growths.
TEST(LiveAllocationTreeTest, ShardsGrowThroughTheScratch) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 1, 14));
  constexpr uint64_t kBlocks = 5000;
  for (uint64_t i = 0; i < kBlocks; ++i) {
    BlockRecord block{
        .address = 0x5555'0000'0000 + i * 32, .size = i + 1, .function = AllocFunction::kMalloc};
    ASSERT_TRUE(tree->Insert(block)) << i;
  }
  EXPECT_GT(tree->shard(0).capacity(), kBlocks);
  EXPECT_EQ(0u, tree->shard(0).header()->dropped);
  for (uint64_t i = 0; i < kBlocks; ++i) {
    BlockRecord found;
    ASSERT_TRUE(tree->shard(0).Find(0x5555'0000'0000 + i * 32, &found)) << i;
    EXPECT_EQ(i + 1, found.size);
  }
}

}  // namespace
}  // namespace heapgraph
