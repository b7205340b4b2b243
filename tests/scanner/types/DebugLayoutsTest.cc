// tests/scanner/types: DebugLayouts reads this test binary's own DWARF: smart pointers by kind,
// base classes inlined, members of class type expanded with dotted names, unknown classes empty.
#include <gtest/gtest.h>

#include <memory>

#include "scanner/types/DebugLayouts.h"

namespace heapgraph::scanner::types {
namespace {

struct Inner {
  std::shared_ptr<int> owned;
};
struct BaseWithPointer {
  std::unique_ptr<int> base_owned;
};
struct Layout : BaseWithPointer {
  long number = 0;
  Inner inner;
  std::weak_ptr<int> watcher;
  int* raw = nullptr;
  static int* shared_static;
};
int* Layout::shared_static = nullptr;

const FieldDescription* At(const std::vector<FieldDescription>& fields, uint32_t offset) {
  for (const FieldDescription& f : fields) {
    if (f.offset == offset) return &f;
  }
  return nullptr;
}

TEST(DebugLayoutsTest, PointerFieldsOfAClass) {
  Layout used;  // keeps the type's DWARF; offsets from its members' addresses
  EXPECT_EQ(Layout::shared_static, nullptr);
  auto off = [&](const void* member) {
    return static_cast<uint32_t>(reinterpret_cast<const char*>(member) -
                                 reinterpret_cast<const char*>(&used));
  };
  ModuleSegments modules;
  modules.Collect();
  DebugLayouts layouts;
  std::vector<FieldDescription> fields =
      layouts.Fields("heapgraph::scanner::types::(anonymous namespace)::Layout", 100, modules);
  ASSERT_FALSE(fields.empty());
  const FieldDescription* base = At(fields, 100 + off(&used.base_owned));
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->name, "base_owned");
  EXPECT_EQ(base->strength, FieldStrength::kStrong);
  uint32_t inner = 100 + off(&used.inner);
  const FieldDescription* owned = At(fields, inner + 8);
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(owned->name, "inner.owned");
  EXPECT_EQ(owned->label, EdgeLabel::kSharedOwner);
  EXPECT_EQ(At(fields, inner)->strength, FieldStrength::kWeak);  // the element word
  uint32_t watcher = 100 + off(&used.watcher);
  EXPECT_EQ(At(fields, watcher)->strength, FieldStrength::kWeak);
  EXPECT_EQ(At(fields, watcher + 8)->strength, FieldStrength::kWeak);
  EXPECT_EQ(At(fields, 100 + off(&used.raw))->strength, FieldStrength::kConservative);
  EXPECT_EQ(At(fields, 100 + off(&used.number)), nullptr);  // not a pointer
  for (size_t i = 1; i < fields.size(); ++i) EXPECT_LE(fields[i - 1].offset, fields[i].offset);
}

TEST(DebugLayoutsTest, UnknownClassesAndManagersHaveNoFields) {
  ModuleSegments modules;
  modules.Collect();
  DebugLayouts layouts;
  EXPECT_TRUE(layouts.Fields("no::such::Class", 0, modules).empty());
  EXPECT_TRUE(layouts.FunctorFields(0x10, modules).empty());
}

}  // namespace
}  // namespace heapgraph::scanner::types
