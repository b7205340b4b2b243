// tests/check: ChangedStacks, the memory of the "changed" check.
#include <gtest/gtest.h>

#include "check/ChangedStacks.h"

namespace heapgraph::report {
namespace {

TEST(ChangedStacksTest, ReportsOnlyStacksWhoseCountOrBytesGrew) {
  ChangedStacks stacks;
  std::vector<scanner::LeakedBlock> first = {{0x1000, 16, 1, 1}, {0x2000, 32, 2, 2}};
  EXPECT_EQ(stacks.Grown(first), (std::vector<bool>{true, true}));  // nothing before
  EXPECT_EQ(stacks.Grown(first), (std::vector<bool>{false, false}));
  std::vector<scanner::LeakedBlock> second = {
      {0x1000, 16, 1, 1}, {0x2000, 32, 2, 2}, {0x3000, 32, 2, 3}, {0x4000, 8, 3, 4}};
  EXPECT_EQ(stacks.Grown(second), (std::vector<bool>{false, true, true, true}));
  std::vector<scanner::LeakedBlock> bigger = {{0x1000, 64, 1, 1}};
  EXPECT_EQ(stacks.Grown(bigger), (std::vector<bool>{true}));  // same count, more bytes
}

}  // namespace
}  // namespace heapgraph::report
