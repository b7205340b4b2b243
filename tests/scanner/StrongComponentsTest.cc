// tests/scanner: the snapshot child's Tarjan (StrongComponents) against hand-checked graphs.
#include <gtest/gtest.h>

#include <vector>

#include "scanner/StrongComponents.h"

namespace heapgraph::scanner {
namespace {

using Edges = std::vector<std::pair<uint32_t, uint32_t>>;

TEST(StrongComponentsTest, CyclesChainsAndSelfEdges) {
  // 0 <-> 1, 1 -> 2 -> 3 -> 2, 4 -> 4, 5 alone.
  Edges edges = {{0, 1}, {1, 0}, {1, 2}, {2, 3}, {3, 2}, {4, 4}};
  StrongComponents c(6, edges);
  EXPECT_EQ(c.count(), 4u);
  EXPECT_EQ(c.component(0), c.component(1));
  EXPECT_EQ(c.component(2), c.component(3));
  EXPECT_NE(c.component(0), c.component(2));
  EXPECT_TRUE(c.cyclic(c.component(0)));
  EXPECT_TRUE(c.cyclic(c.component(2)));
  EXPECT_TRUE(c.cyclic(c.component(4)));
  EXPECT_FALSE(c.cyclic(c.component(5)));
}

TEST(StrongComponentsTest, LongRingNeedsNoRecursion) {
  constexpr uint32_t kN = 200000;
  Edges edges;
  for (uint32_t v = 0; v < kN; ++v) edges.push_back({v, (v + 1) % kN});
  StrongComponents c(kN, edges);
  EXPECT_EQ(c.count(), 1u);
  EXPECT_TRUE(c.cyclic(0));
}

TEST(StrongComponentsTest, AcyclicChain) {
  Edges edges = {{0, 1}, {1, 2}};
  StrongComponents c(3, edges);
  EXPECT_EQ(c.count(), 3u);
  for (uint32_t v = 0; v < 3; ++v) EXPECT_FALSE(c.cyclic(c.component(v)));
}

}  // namespace
}  // namespace heapgraph::scanner
