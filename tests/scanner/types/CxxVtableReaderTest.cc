// tests/scanner/types: CxxVtableReader on real objects of this process: polymorphic objects get
// their dynamic class (with DWARF fields), plain structs and small blocks stay untyped.
#include <gtest/gtest.h>

#include <memory>

#include "scanner/types/CxxVtableReader.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

struct Listener {
  virtual ~Listener() = default;
};
struct Chat : Listener {
  std::shared_ptr<Listener> peer;
  std::weak_ptr<Listener> observer;
  std::unique_ptr<int> counter;
  Listener* raw = nullptr;
};
struct NotPolymorphic {
  void* words[3] = {};
};

TEST(CxxVtableReaderTest, TypesPolymorphicObjectsByDynamicClass) {
  Listener* chat = new Chat;
  auto* plain = new NotPolymorphic;
  auto* tiny = new char[4];
  test::Blocks blocks(
      {test::Range(static_cast<Chat*>(chat)), test::Range(plain), test::Range(tiny, 4)});
  DebugLayouts layouts;
  CxxVtableReader reader(&layouts);
  ASSERT_TRUE(reader.Prepare(PrepareContext{blocks.modules}));
  TypeIdentity id;
  ASSERT_TRUE(reader.Identify(*blocks.memory, blocks.Of(chat), &id));
  EXPECT_EQ(id.model, ObjectModel::kCxxPolymorphic);
  EXPECT_EQ(id.key, reinterpret_cast<uint64_t>(&typeid(Chat)));
  EXPECT_FALSE(reader.Identify(*blocks.memory, blocks.Of(plain), &id));
  EXPECT_FALSE(reader.Identify(*blocks.memory, blocks.Of(tiny), &id));

  TypeDescription d = reader.Describe(
      TypeIdentity{reinterpret_cast<uint64_t>(&typeid(Chat)), 0, ObjectModel::kCxxPolymorphic},
      DescribeContext{blocks.modules});
  EXPECT_EQ(d.name, "heapgraph::scanner::types::(anonymous namespace)::Chat");
  // peer: element +8 (not owning), control block +16 (owning); observer +24/+32 weak;
  // counter +40 owning; raw +48 conservative.
  ASSERT_EQ(d.fields.size(), 6u);
  EXPECT_EQ(d.fields[0].offset, 8u);
  EXPECT_EQ(d.fields[0].strength, FieldStrength::kWeak);
  EXPECT_EQ(d.fields[1].offset, 16u);
  EXPECT_EQ(d.fields[1].strength, FieldStrength::kStrong);
  EXPECT_EQ(d.fields[1].label, EdgeLabel::kSharedOwner);
  EXPECT_EQ(d.fields[1].name, "peer");
  EXPECT_EQ(d.fields[3].offset, 32u);
  EXPECT_EQ(d.fields[3].strength, FieldStrength::kWeak);
  EXPECT_EQ(d.fields[3].name, "observer");
  EXPECT_EQ(d.fields[4].name, "counter");
  EXPECT_EQ(d.fields[4].strength, FieldStrength::kStrong);
  EXPECT_EQ(d.fields[5].name, "raw");
  EXPECT_EQ(d.fields[5].strength, FieldStrength::kConservative);
  delete[] tiny;
  delete plain;
  delete chat;
}

}  // namespace
}  // namespace heapgraph::scanner::types
