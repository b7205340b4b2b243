// heap/lag/CostlyStack: samples grouped by top frame, weighted by repetition, the most recent wins
// among equals.
#include <gtest/gtest.h>

#include "heap/lag/CostlyStack.h"

namespace heapgraph {
namespace {

TEST(CostlyStackTest, NoSamplesNoStack) {
  CostlyChoice c = CostlyStack::Choose(nullptr, 0);
  EXPECT_EQ(c.stack, 0u);
  EXPECT_EQ(c.repeats, 0u);
}

TEST(CostlyStackTest, MostRepeatedTopFrameWinsWithItsNewestStack) {
  // Top 0x10 three times (stacks 1, 2, 3: different callers), top 0x20 twice.
  CostlySample s[] = {{1, 0x10}, {4, 0x20}, {2, 0x10}, {5, 0x20}, {3, 0x10}};
  CostlyChoice c = CostlyStack::Choose(s, 5);
  EXPECT_EQ(c.stack, 3u);
  EXPECT_EQ(c.repeats, 3u);
}

TEST(CostlyStackTest, AmongEqualsTheMostRecentWins) {
  CostlySample s[] = {{1, 0x10}, {2, 0x20}, {3, 0x10}, {4, 0x20}};
  CostlyChoice c = CostlyStack::Choose(s, 4);
  EXPECT_EQ(c.stack, 4u);
  EXPECT_EQ(c.repeats, 2u);
}

}  // namespace
}  // namespace heapgraph
