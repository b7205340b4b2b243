// heap/lag/Annealing: the same stack is written once per lag; the checks back off along the
// Fibonacci sequence until the stack changes or the lag ends.
#include <gtest/gtest.h>

#include <vector>

#include "heap/lag/Annealing.h"

namespace heapgraph {
namespace {

TEST(AnnealingTest, SameStackBacksOffAlongFibonacci) {
  Annealing a;
  std::vector<uint32_t> skips;
  int writes = 0;
  for (int check = 0; check < 60; ++check) {
    if (!a.Due()) continue;
    if (a.ShouldWrite(7)) {
      ++writes;
    } else {
      skips.push_back(a.skipping());
    }
  }
  EXPECT_EQ(writes, 1);
  ASSERT_GE(skips.size(), 6u);
  EXPECT_EQ(std::vector<uint32_t>(skips.begin(), skips.begin() + 6),
            (std::vector<uint32_t>{1, 1, 2, 3, 5, 8}));
}

TEST(AnnealingTest, ChangedStackIsWrittenAndRestartsTheSequence) {
  Annealing a;
  EXPECT_TRUE(a.ShouldWrite(1));
  EXPECT_FALSE(a.ShouldWrite(1));
  EXPECT_EQ(a.skipping(), 1u);
  EXPECT_FALSE(a.Due());
  EXPECT_TRUE(a.Due());
  EXPECT_FALSE(a.ShouldWrite(1));
  EXPECT_EQ(a.skipping(), 1u);
  EXPECT_FALSE(a.Due());
  EXPECT_TRUE(a.ShouldWrite(2));
  EXPECT_FALSE(a.ShouldWrite(2));
  EXPECT_EQ(a.skipping(), 1u) << "the back-off restarts with a new stack";
}

TEST(AnnealingTest, ResetStartsANewLag) {
  Annealing a;
  EXPECT_TRUE(a.ShouldWrite(1));
  EXPECT_FALSE(a.ShouldWrite(1));
  a.Reset();
  EXPECT_TRUE(a.Due());
  EXPECT_TRUE(a.ShouldWrite(1));
}

}  // namespace
}  // namespace heapgraph
