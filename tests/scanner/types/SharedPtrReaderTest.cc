// tests/scanner/types: SharedPtrReader on real control blocks of this process: make_shared
// (inplace: typed as the object), shared_ptr(new T) (its managed object typed through
// IdentifyReferenced), a custom deleter, and the weak/expired flags.
#include <gtest/gtest.h>

#include <memory>

#include "scanner/types/SharedPtrReader.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

struct Payload {
  uint64_t value[3] = {1, 2, 3};
};

// The control block of `p`: the word after the element pointer of a shared_ptr/weak_ptr.
template <typename Pointer>
void* ControlOf(const Pointer& p) {
  return reinterpret_cast<void* const*>(&p)[1];
}

TEST(SharedPtrReaderTest, MakeSharedBlockIsTheObject) {
  auto p = std::make_shared<Payload>();
  void* control = ControlOf(p);
  // The block: control block header (16 bytes) + the Payload.
  test::Blocks blocks({{reinterpret_cast<uint64_t>(control), 16 + sizeof(Payload)}});
  SharedPtrReader reader;
  ASSERT_TRUE(reader.Prepare(PrepareContext{blocks.modules}));
  TypeIdentity id;
  ASSERT_TRUE(reader.Identify(*blocks.memory, 0, &id));
  EXPECT_EQ(id.model, ObjectModel::kSharedPtrControl);
  EXPECT_EQ(SharedPtrReader::VariantOf(id), SharedPtrReader::kInplace);
  EXPECT_EQ(SharedPtrReader::OffsetOf(id), 16u);
  EXPECT_EQ(reinterpret_cast<uint64_t>(p.get()) - reinterpret_cast<uint64_t>(control), 16u);
  EXPECT_EQ(id.flags, 0);
  TypeDescription d = reader.Describe(id, DescribeContext{blocks.modules});
  EXPECT_EQ(d.name, "heapgraph::scanner::types::(anonymous namespace)::Payload");

  std::weak_ptr<Payload> weak = p;
  ASSERT_TRUE(reader.Identify(*blocks.memory, 0, &id));
  EXPECT_EQ(id.flags, SharedPtrReader::kHasWeak);
  p.reset();  // the block stays (the weak_ptr holds it); the object has expired
  ASSERT_TRUE(reader.Identify(*blocks.memory, 0, &id));
  EXPECT_EQ(id.flags & SharedPtrReader::kExpired, SharedPtrReader::kExpired);
}

TEST(SharedPtrReaderTest, SeparateObjectIsTypedThroughItsControlBlock) {
  std::shared_ptr<Payload> p(new Payload);
  void* control = ControlOf(p);
  test::Blocks blocks({{reinterpret_cast<uint64_t>(control), 24}, test::Range(p.get())});
  SharedPtrReader reader;
  ASSERT_TRUE(reader.Prepare(PrepareContext{blocks.modules}));
  TypeIdentity id;
  ASSERT_TRUE(reader.Identify(*blocks.memory, blocks.Of(control), &id));
  EXPECT_EQ(SharedPtrReader::VariantOf(id), SharedPtrReader::kCountedPtr);
  EXPECT_EQ(SharedPtrReader::OffsetOf(id), 16u);
  EXPECT_FALSE(reader.Identify(*blocks.memory, blocks.Of(p.get()), &id));  // no vtable
  ASSERT_TRUE(reader.Identify(*blocks.memory, blocks.Of(control), &id));
  test::RecordingSink sink;
  reader.IdentifyReferenced(*blocks.memory, blocks.Of(control), id, sink);
  ASSERT_EQ(sink.assigned.size(), 1u);
  EXPECT_EQ(sink.assigned[0].first, blocks.Of(p.get()));
  EXPECT_EQ(sink.assigned[0].second.model, ObjectModel::kSharedPtrObject);
  TypeDescription object = reader.Describe(sink.assigned[0].second, {blocks.modules});
  EXPECT_EQ(object.name, "heapgraph::scanner::types::(anonymous namespace)::Payload");
  TypeDescription d = reader.Describe(id, {blocks.modules});
  EXPECT_EQ(d.name,
            "shared_ptr control block<heapgraph::scanner::types::(anonymous namespace)::Payload>");
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_EQ(d.fields[0].strength, FieldStrength::kStrong);
  EXPECT_EQ(d.fields[0].label, EdgeLabel::kSharedManaged);
  EXPECT_TRUE(d.exhaustive);
}

TEST(SharedPtrReaderTest, CustomDeleterKeepsThePointerLast) {
  struct Deleter {
    uint64_t tag = 7;
    void operator()(Payload* p) const { delete p; }
  };
  std::shared_ptr<Payload> p(new Payload, Deleter{});
  void* control = ControlOf(p);
  // _Sp_counted_deleter<Payload*, Deleter, allocator, _S_atomic>: header, deleter, pointer.
  test::Blocks blocks({{reinterpret_cast<uint64_t>(control), 32}, test::Range(p.get())});
  SharedPtrReader reader;
  ASSERT_TRUE(reader.Prepare(PrepareContext{blocks.modules}));
  TypeIdentity id;
  ASSERT_TRUE(reader.Identify(*blocks.memory, blocks.Of(control), &id));
  EXPECT_EQ(SharedPtrReader::VariantOf(id), SharedPtrReader::kDeleter);
  test::RecordingSink sink;
  reader.IdentifyReferenced(*blocks.memory, blocks.Of(control), id, sink);
  ASSERT_EQ(sink.assigned.size(), 1u);
  EXPECT_EQ(sink.assigned[0].first, blocks.Of(p.get()));
}

TEST(SharedPtrReaderTest, ManagedTypeOfControlBlockNames) {
  EXPECT_EQ(SharedPtrReader::ManagedType(
                "std::_Sp_counted_ptr_inplace<ns::Foo<int, char>, std::allocator<ns::Foo<int, "
                "char> >, (__gnu_cxx::_Lock_policy)2>"),
            "ns::Foo<int, char>");
  EXPECT_EQ(SharedPtrReader::ManagedType("std::_Sp_counted_ptr<Bar*, (__gnu_cxx::_Lock_policy)2>"),
            "Bar");
}

}  // namespace
}  // namespace heapgraph::scanner::types
