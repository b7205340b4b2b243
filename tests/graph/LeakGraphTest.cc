#include <gtest/gtest.h>

#include "graph/LeakGraph.h"

namespace heapgraph::graph {
namespace {

// Blocks 0..n-1 at address 0x1000 * (i + 1), size 16 * (i + 1), sequence = `seq[i]` or i.
std::vector<LeakedBlock> Blocks(size_t n, std::vector<uint64_t> seq = {}) {
  std::vector<LeakedBlock> blocks(n);
  for (size_t i = 0; i < n; ++i) {
    blocks[i] = {0x1000 * (i + 1), 16 * (i + 1), seq.empty() ? i : seq[i]};
  }
  return blocks;
}

TEST(LeakGraphTest, LoneBlocksAreDirect) {
  LeakGraph g(Blocks(3), {});
  ASSERT_EQ(g.roots().size(), 3u);
  for (uint32_t v = 0; v < 3; ++v) EXPECT_TRUE(g.is_direct(v));
  EXPECT_EQ(g.roots()[0].retained_bytes, 48u);  // largest first
  EXPECT_TRUE(g.cycles().empty());
}

TEST(LeakGraphTest, ChainHasOneDirectLeakRetainingAll) {
  LeakGraph g(Blocks(4), {{0, 1}, {1, 2}, {2, 3}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.roots()[0].representative, 0u);
  EXPECT_EQ(g.roots()[0].retained_bytes, 16u + 32 + 48 + 64);
  EXPECT_EQ(g.roots()[0].retained_blocks, 4u);
  EXPECT_FALSE(g.is_direct(3));
  EXPECT_EQ(g.immediate_dominator(3), 2u);
}

TEST(LeakGraphTest, SelfPointerIsACycleOfOne) {
  LeakGraph g(Blocks(1), {{0, 0}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_TRUE(g.roots()[0].cyclic);
  ASSERT_EQ(g.cycles().size(), 1u);
}

TEST(LeakGraphTest, CycleYieldsOneDirectRecordChosenByAllocationOrder) {
  // 3-cycle 0 -> 1 -> 2 -> 0 where block 2 was allocated first, with a tail 2 -> 3.
  LeakGraph g(Blocks(4, {5, 7, 1, 9}), {{0, 1}, {1, 2}, {2, 0}, {2, 3}});
  ASSERT_EQ(g.roots().size(), 1u);
  const LeakRoot& r = g.roots()[0];
  EXPECT_TRUE(r.cyclic);
  EXPECT_EQ(r.representative, 2u);
  EXPECT_EQ(r.members, (std::vector<uint32_t>{2, 0, 1}));
  EXPECT_EQ(r.retained_blocks, 4u);
  EXPECT_TRUE(g.is_direct(2));
  EXPECT_FALSE(g.is_direct(0));
  EXPECT_FALSE(g.is_direct(3));
}

TEST(LeakGraphTest, CycleHeldByADirectLeakIsIndirectButListed) {
  // 0 -> 1 <-> 2: the cycle is not a source; 0 is the only direct leak.
  LeakGraph g(Blocks(3), {{0, 1}, {1, 2}, {2, 1}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.roots()[0].representative, 0u);
  EXPECT_FALSE(g.roots()[0].cyclic);
  ASSERT_EQ(g.cycles().size(), 1u);
  EXPECT_EQ(g.cycles()[0], (std::vector<uint32_t>{1, 2}));
}

TEST(LeakGraphTest, SharedSubgraphIsNotCountedTwice) {
  // 0 -> 2, 1 -> 2, 2 -> 3: blocks 2 and 3 are retained by neither root alone.
  LeakGraph g(Blocks(4), {{0, 2}, {1, 2}, {2, 3}});
  ASSERT_EQ(g.roots().size(), 2u);
  uint64_t total = 0;
  for (const LeakRoot& r : g.roots()) total += r.retained_bytes;
  EXPECT_EQ(total, 16u + 32);
  EXPECT_EQ(g.immediate_dominator(2), UINT32_MAX);
}

TEST(LeakGraphTest, TreeRetainsEverything) {
  LeakGraph g(Blocks(7), {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 5}, {2, 6}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.roots()[0].retained_blocks, 7u);
}

TEST(LeakGraphTest, EmptyGraph) {
  LeakGraph g({}, {});
  EXPECT_TRUE(g.roots().empty());
}

}  // namespace
}  // namespace heapgraph::graph
