// tests/graph: RetainCycles on hand-built strong-reference graphs: cycle kinds and their priority,
// canonical rotation (the same cycle, numbered differently, gives the same record), shortest
// paths through larger components, owning self references, and acyclic graphs.
#include <gtest/gtest.h>

#include "graph/RetainCycles.h"

namespace heapgraph::graph {
namespace {

using scanner::types::EdgeLabel;
constexpr scanner::types::ClosureKind kNone = scanner::types::ClosureKind::kNone;
constexpr scanner::types::ClosureKind kBlock = scanner::types::ClosureKind::kBlock;
constexpr scanner::types::ClosureKind kFunction = scanner::types::ClosureKind::kFunction;

std::vector<std::string> Names(const RetainCycle& c, const std::vector<RetainCycleVertex>& v,
                               const std::vector<StrongEdge>& e) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.members.size(); ++i) {
    out.push_back(v[c.members[i]].name + "." + RetainCycles::FieldText(e[c.edges[i]]));
  }
  return out;
}

TEST(RetainCyclesTest, SharedPtrPairInCanonicalRotation) {
  // Numbered so that Beta (vertex 0) comes first in index order; Alpha sorts first by name.
  std::vector<RetainCycleVertex> v = {{"Beta", kNone, true}, {"Alpha", kNone, true}};
  std::vector<StrongEdge> e = {{0, 1, 24, EdgeLabel::kSharedOwner, "alpha"},
                               {1, 0, 24, EdgeLabel::kSharedOwner, "beta"}};
  RetainCycles cycles(v, e);
  ASSERT_EQ(cycles.cycles().size(), 1u);
  const RetainCycle& c = cycles.cycles()[0];
  EXPECT_EQ(c.kind, "shared_ptr");
  EXPECT_TRUE(c.leaked);
  EXPECT_EQ(Names(c, v, e), (std::vector<std::string>{"Alpha.beta", "Beta.alpha"}));

  // The same cycle with the vertices and edges listed the other way round: the same record.
  std::vector<RetainCycleVertex> v2 = {{"Alpha", kNone, true}, {"Beta", kNone, true}};
  std::vector<StrongEdge> e2 = {{1, 0, 24, EdgeLabel::kSharedOwner, "alpha"},
                                {0, 1, 24, EdgeLabel::kSharedOwner, "beta"}};
  RetainCycles again(v2, e2);
  ASSERT_EQ(again.cycles().size(), 1u);
  EXPECT_EQ(Names(again.cycles()[0], v2, e2), Names(c, v, e));
}

TEST(RetainCyclesTest, SameTypesRotateByField) {
  // Two Nodes: the rotation starting at the member whose field sorts first wins.
  std::vector<RetainCycleVertex> v = {{"Node", kNone, false}, {"Node", kNone, false}};
  std::vector<StrongEdge> e = {{0, 1, 8, EdgeLabel::kNone, "next"},
                               {1, 0, 16, EdgeLabel::kNone, "back"}};
  RetainCycles cycles(v, e);
  ASSERT_EQ(cycles.cycles().size(), 1u);
  EXPECT_EQ(Names(cycles.cycles()[0], v, e), (std::vector<std::string>{"Node.back", "Node.next"}));
  EXPECT_EQ(cycles.cycles()[0].kind, "generic");
  EXPECT_FALSE(cycles.cycles()[0].leaked);
}

TEST(RetainCyclesTest, KindsInPriorityOrder) {
  auto kind = [](std::vector<RetainCycleVertex> v, std::vector<StrongEdge> e) {
    RetainCycles cycles(v, e);
    return cycles.cycles().empty() ? std::string("none") : cycles.cycles()[0].kind;
  };
  RetainCycleVertex owner{"Owner", kNone, true}, block{"Block", kBlock, true},
      functor{"std::function<lambda>", kFunction, true};
  EXPECT_EQ(kind({owner, block},
                 {{0, 1, 8, EdgeLabel::kNone, "cb"}, {1, 0, 32, EdgeLabel::kCapture, "self"}}),
            "block-self");
  EXPECT_EQ(kind({owner, block}, {{0, 1, 8, EdgeLabel::kSharedOwner, "cb"},
                                  {1, 0, 32, EdgeLabel::kSharedOwner, "self"}}),
            "block-self");  // a closure outranks shared_ptr
  // A std::function's functor capturing its owner is a kind of its own.
  EXPECT_EQ(kind({owner, functor}, {{0, 1, 8, EdgeLabel::kNone, "on_message"},
                                    {1, 0, 8, EdgeLabel::kSharedOwner, "s"}}),
            "function-self");
  EXPECT_EQ(kind({owner, owner}, {{0, 1, 8, EdgeLabel::kDelegate, "delegate"},
                                  {1, 0, 8, EdgeLabel::kNone, "child"}}),
            "delegate");
  EXPECT_EQ(kind({owner, block}, {{0, 1, 8, EdgeLabel::kTimerTarget, "target"},
                                  {1, 0, 8, EdgeLabel::kDelegate, "delegate"}}),
            "timer-target");
  EXPECT_EQ(kind({owner, owner}, {{0, 1, 16, EdgeLabel::kSharedManaged, "_M_ptr"},
                                  {1, 0, 8, EdgeLabel::kNone, "x"}}),
            "shared_ptr");
  EXPECT_EQ(kind({owner, owner}, {{0, 1, 8, EdgeLabel::kNone, "x"}}), "none");  // no cycle
}

TEST(RetainCyclesTest, ShortestPathThroughALargerComponent) {
  // 0 -> 1 -> 2 -> 3 -> 0 and a chord 2 -> 0: the printed cycle is the 3-cycle 0 1 2.
  std::vector<RetainCycleVertex> v = {
      {"A", kNone, true}, {"B", kNone, true}, {"C", kNone, true}, {"D", kNone, true}};
  std::vector<StrongEdge> e = {{0, 1, 8, EdgeLabel::kNone, "b"},
                               {1, 2, 8, EdgeLabel::kNone, "c"},
                               {2, 3, 8, EdgeLabel::kNone, "d"},
                               {3, 0, 8, EdgeLabel::kNone, "a"},
                               {2, 0, 16, EdgeLabel::kNone, "back"}};
  RetainCycles cycles(v, e);
  ASSERT_EQ(cycles.cycles().size(), 1u);
  const RetainCycle& c = cycles.cycles()[0];
  EXPECT_EQ(c.component_size, 4u);
  EXPECT_EQ(Names(c, v, e), (std::vector<std::string>{"A.b", "B.c", "C.back"}));
}

// An object owning itself through an owning reference (a typed self-capture) is a cycle of one.
TEST(RetainCyclesTest, OwningSelfReferenceAndOffsetsWithoutNames) {
  std::vector<RetainCycleVertex> v = {{"Loop", kNone, true}, {"Other", kNone, true}};
  std::vector<StrongEdge> e = {{0, 0, 40, EdgeLabel::kNone, ""}, {0, 1, 8, EdgeLabel::kNone, ""}};
  RetainCycles cycles(v, e);
  ASSERT_EQ(cycles.cycles().size(), 1u);
  EXPECT_EQ(Names(cycles.cycles()[0], v, e), (std::vector<std::string>{"Loop.+40"}));
}

TEST(RetainCyclesTest, EmptyGraph) {
  std::vector<RetainCycleVertex> v;
  std::vector<StrongEdge> e;
  EXPECT_TRUE(RetainCycles(v, e).cycles().empty());
}

}  // namespace
}  // namespace heapgraph::graph
