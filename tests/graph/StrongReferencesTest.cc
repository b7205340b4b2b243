// tests/graph: StrongReferences' rules on hand-built typed references: described fields, exhaustive
// layouts, std::function functors and heap Blocks (their holders against their owners), and
// shared_ptr/weak_ptr pairs told apart by the control block's counts when no field says which.
#include <gtest/gtest.h>

#include "graph/StrongReferences.h"
#include "scanner/types/SharedPtrReader.h"

namespace heapgraph::graph {
namespace {

using scanner::TypedEdge;
using scanner::TypedObject;
using scanner::types::EdgeLabel;
using scanner::types::FieldStrength;
using scanner::types::ObjectModel;
using scanner::types::SharedPtrReader;
using scanner::types::TypeDescription;

TypedObject Object(ObjectModel model, uint64_t aux = 0, uint8_t flags = 0) {
  TypedObject o;
  o.identity.model = model;
  o.identity.aux = aux;
  o.identity.flags = flags;
  return o;
}

uint64_t Inplace() {
  return uint64_t{SharedPtrReader::kInplace} << 32 | 16;
}

struct Fixture {
  scanner::TypedScanResult typed;
  std::vector<TypeDescription> descriptions;
  std::vector<StrongEdge> Run() {
    std::vector<const TypeDescription*> d;
    for (const TypeDescription& x : descriptions) d.push_back(&x);
    return StrongReferences(typed, d).edges();
  }
};

TEST(StrongReferencesTest, FieldsDecideWhenTheyAreStrongOrWeak) {
  Fixture f;
  f.typed.objects = {Object(ObjectModel::kCxxPolymorphic), Object(ObjectModel::kCxxPolymorphic)};
  f.descriptions.resize(2);
  f.descriptions[0].fields = {{8, FieldStrength::kStrong, EdgeLabel::kDelegate, "delegate"},
                              {16, FieldStrength::kWeak, EdgeLabel::kNone, "weak"},
                              {24, FieldStrength::kConservative, EdgeLabel::kNone, "raw"}};
  f.typed.edges = {{0, 1, 8, 0}, {0, 1, 16, 0}, {0, 1, 24, 0}, {0, 1, 32, 0}};
  std::vector<StrongEdge> edges = f.Run();
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].offset, 8u);
  EXPECT_EQ(edges[0].label, EdgeLabel::kDelegate);
  EXPECT_EQ(edges[0].field, "delegate");
}

TEST(StrongReferencesTest, ExhaustiveLayoutsOwnOnlyTheirFields) {
  Fixture f;
  f.typed.objects = {Object(ObjectModel::kClangBlock), Object(ObjectModel::kCxxPolymorphic)};
  f.descriptions.resize(2);
  f.descriptions[0].exhaustive = true;
  f.descriptions[0].fields = {{32, FieldStrength::kStrong, EdgeLabel::kCapture, "captured"}};
  f.typed.edges = {{0, 1, 24, 0}, {0, 1, 32, 0}};
  std::vector<StrongEdge> edges = f.Run();
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].offset, 32u);
}

TEST(StrongReferencesTest, AStdFunctionOwnsItsHeapFunctor) {
  Fixture f;
  f.typed.objects = {Object(ObjectModel::kCxxPolymorphic), Object(ObjectModel::kStdFunctor)};
  f.descriptions.resize(2);
  f.typed.edges = {{0, 1, 8, 0}, {0, 1, 16, 8}};  // the start, and an interior pointer
  std::vector<StrongEdge> edges = f.Run();
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].offset, 8u);
}

TEST(StrongReferencesTest, AFunctorWithTwoTypedHoldersIsOwnedByNeither) {
  Fixture f;
  // 0 holds the std::function, 1 a raw copy of the functor pointer: which owns is unknown.
  f.typed.objects = {Object(ObjectModel::kCxxPolymorphic), Object(ObjectModel::kCxxPolymorphic),
                     Object(ObjectModel::kStdFunctor)};
  f.descriptions.resize(3);
  f.typed.edges = {{0, 2, 8, 0}, {1, 2, 8, 0}};
  EXPECT_TRUE(f.Run().empty());
}

// A heap Block: its holders own it while there are no more of them than its reference count.
TEST(StrongReferencesTest, HeapBlockHoldersOwnUpToTheBlocksReferenceCount) {
  for (uint32_t count : {1u, 2u, 3u}) {
    Fixture f;
    TypedObject block = Object(ObjectModel::kClangBlock);
    block.identity.count = count;
    f.typed.objects = {Object(ObjectModel::kCxxPolymorphic), Object(ObjectModel::kCxxPolymorphic),
                       block};
    f.descriptions.resize(3);
    f.descriptions[1].fields = {{16, FieldStrength::kWeak, EdgeLabel::kNone, "weak"}};
    // Two raw holders (0 at +8, 1 at +8), a weak one (1 at +16) that holds no count, and an
    // interior pointer (0 at +24) that is no holder.
    f.typed.edges = {{0, 2, 8, 0}, {0, 2, 24, 8}, {1, 2, 8, 0}, {1, 2, 16, 0}};
    std::vector<StrongEdge> edges = f.Run();
    EXPECT_EQ(edges.size(), count >= 2 ? 2u : 0u) << count;
  }
}

TEST(StrongReferencesTest, SmartPointerPairsByControlBlockCounts) {
  for (uint8_t flags : {uint8_t{0}, SharedPtrReader::kHasWeak, SharedPtrReader::kExpired}) {
    Fixture f;
    // Holder 0 has {element, control} at +8/+16 pointing at make_shared block 1.
    f.typed.objects = {Object(ObjectModel::kCxxPolymorphic),
                       Object(ObjectModel::kSharedPtrControl, Inplace(), flags)};
    f.descriptions.resize(2);
    f.typed.edges = {{0, 1, 8, 16}, {0, 1, 16, 0}};
    std::vector<StrongEdge> edges = f.Run();
    if (flags == 0) {
      ASSERT_EQ(edges.size(), 1u);
      EXPECT_EQ(edges[0].offset, 16u);
      EXPECT_EQ(edges[0].label, EdgeLabel::kSharedOwner);
    } else {
      EXPECT_TRUE(edges.empty()) << int(flags);  // maybe a weak_ptr: left out
    }
  }
}

TEST(StrongReferencesTest, AControlBlockWordWithoutItsElementIsNoPair) {
  Fixture f;
  f.typed.objects = {Object(ObjectModel::kCxxPolymorphic),
                     Object(ObjectModel::kSharedPtrControl, Inplace(), 0)};
  f.descriptions.resize(2);
  f.typed.edges = {{0, 1, 16, 0}};  // no element word at +8
  EXPECT_TRUE(f.Run().empty());
}

TEST(StrongReferencesTest, SeparateControlBlockPairsWithItsManagedObject) {
  Fixture f;
  uint64_t counted = uint64_t{SharedPtrReader::kCountedPtr} << 32 | 16;
  // 0 holds {element -> 2, control -> 1}; control block 1's _M_ptr (+16) -> 2.
  f.typed.objects = {Object(ObjectModel::kCxxPolymorphic),
                     Object(ObjectModel::kSharedPtrControl, counted, 0),
                     Object(ObjectModel::kSharedPtrObject)};
  f.descriptions.resize(3);
  f.descriptions[1].exhaustive = true;
  f.descriptions[1].fields = {{16, FieldStrength::kStrong, EdgeLabel::kSharedManaged, "_M_ptr"}};
  f.typed.edges = {{0, 2, 8, 0}, {0, 1, 16, 0}, {1, 2, 16, 0}};
  std::vector<StrongEdge> edges = f.Run();
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].from, 0u);
  EXPECT_EQ(edges[0].to, 1u);
  EXPECT_EQ(edges[1].label, EdgeLabel::kSharedManaged);
}

}  // namespace
}  // namespace heapgraph::graph
