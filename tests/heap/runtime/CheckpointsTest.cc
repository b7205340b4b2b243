// tests/heap/runtime: Checkpoints, the named sequence marks of heapgraph_checkpoint().
#include <gtest/gtest.h>

#include <string>

#include "heap/runtime/Checkpoints.h"

namespace heapgraph {
namespace {

TEST(CheckpointsTest, FindsWhatWasSetAndMovesOnSetAgain) {
  static Checkpoints checkpoints;
  uint64_t seq = 0;
  EXPECT_FALSE(checkpoints.Find("a", &seq));
  checkpoints.Set("a", 100);
  checkpoints.Set("b", 200);
  ASSERT_TRUE(checkpoints.Find("a", &seq));
  EXPECT_EQ(seq, 100u);
  checkpoints.Set("a", 300);
  ASSERT_TRUE(checkpoints.Find("a", &seq));
  EXPECT_EQ(seq, 300u);
  ASSERT_TRUE(checkpoints.Find("b", &seq));
  EXPECT_EQ(seq, 200u);
}

TEST(CheckpointsTest, ReplacesTheLeastRecentlySetWhenFull) {
  static Checkpoints checkpoints;
  for (size_t i = 0; i <= Checkpoints::kEntries; ++i) {
    checkpoints.Set(("n" + std::to_string(i)).c_str(), i);
  }
  uint64_t seq = 0;
  EXPECT_FALSE(checkpoints.Find("n0", &seq));
  ASSERT_TRUE(checkpoints.Find("n1", &seq));
  EXPECT_EQ(seq, 1u);
  ASSERT_TRUE(checkpoints.Find(("n" + std::to_string(Checkpoints::kEntries)).c_str(), &seq));
}

TEST(CheckpointsTest, CutsLongNames) {
  static Checkpoints checkpoints;
  std::string name(Checkpoints::kNameBytes + 20, 'x');
  checkpoints.Set(name.c_str(), 7);
  uint64_t seq = 0;
  ASSERT_TRUE(checkpoints.Find(name.c_str(), &seq));
  EXPECT_EQ(seq, 7u);
}

}  // namespace
}  // namespace heapgraph
