// tests/graph: CycleKind on hand-built steps: each rule of graph/CycleKind.h and their order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/CycleKind.h"

namespace heapgraph::graph {
namespace {

using scanner::types::ClosureKind;
using scanner::types::EdgeLabel;

std::string Kind(std::vector<CycleStep> steps) {
  return CycleKind(steps);
}

TEST(CycleKindTest, PlainReferencesAreGeneric) {
  EXPECT_EQ(Kind({{}, {}}), "generic");
  EXPECT_EQ(Kind({}), "generic");
  EXPECT_EQ(Kind({{ClosureKind::kNone, EdgeLabel::kCapture}, {}}), "generic");
}

// A Block on a cycle points to the next member from a captured slot, whatever the owner is.
TEST(CycleKindTest, ABlockOnTheCycleIsBlockSelf) {
  EXPECT_EQ(Kind({{ClosureKind::kBlock, EdgeLabel::kNone}, {}}), "block-self");
}

TEST(CycleKindTest, AFunctorOnTheCycleIsFunctionSelf) {
  EXPECT_EQ(Kind({{}, {ClosureKind::kFunction, EdgeLabel::kNone}}), "function-self");
}

// A weak-named ivar (label delegate) on a leaked cycle: the cycle is a delegate cycle.
TEST(CycleKindTest, ADelegateLabelIsDelegate) {
  EXPECT_EQ(Kind({{ClosureKind::kNone, EdgeLabel::kDelegate}, {}}), "delegate");
}

TEST(CycleKindTest, ATimerTargetLabelIsTimerTarget) {
  EXPECT_EQ(Kind({{ClosureKind::kNone, EdgeLabel::kTimerTarget}, {}}), "timer-target");
}

TEST(CycleKindTest, ASharedPtrWordIsSharedPtr) {
  EXPECT_EQ(Kind({{ClosureKind::kNone, EdgeLabel::kSharedOwner}, {}}), "shared_ptr");
  EXPECT_EQ(Kind({{ClosureKind::kNone, EdgeLabel::kSharedManaged}, {}}), "shared_ptr");
}

TEST(CycleKindTest, FirstMatchWins) {
  CycleStep timer{ClosureKind::kNone, EdgeLabel::kTimerTarget};
  CycleStep delegate{ClosureKind::kNone, EdgeLabel::kDelegate};
  CycleStep block{ClosureKind::kBlock, EdgeLabel::kNone};
  CycleStep functor{ClosureKind::kFunction, EdgeLabel::kNone};
  CycleStep shared{ClosureKind::kNone, EdgeLabel::kSharedOwner};
  EXPECT_EQ(Kind({shared, functor, block, delegate, timer}), "timer-target");
  EXPECT_EQ(Kind({shared, functor, block, delegate}), "delegate");
  EXPECT_EQ(Kind({shared, functor, block}), "block-self");
  EXPECT_EQ(Kind({shared, functor}), "function-self");
}

}  // namespace
}  // namespace heapgraph::graph
