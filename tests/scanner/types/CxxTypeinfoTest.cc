// tests/scanner/types: CxxTypeinfo validates real vtable pointers of this process and rejects
// fake ones (vptr outside read-only data, offset-to-top not 0, a typeinfo whose own vptr is not a
// __cxxabiv1 vtable, a vptr into the heap), and allocates its cache only when there are vtables.
#include <gtest/gtest.h>
#include <malloc.h>

#include <typeinfo>

#include "scanner/types/CxxTypeinfo.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

struct Shape {
  virtual ~Shape() = default;
  int sides = 0;
};
struct Square : Shape {
  int side = 2;
};
struct Plain {
  uint64_t words[4] = {};
};

// Fake vtables in .rodata: {offset-to-top, typeinfo, first slot}.
const uint64_t kOffsetNotZero[3] = {uint64_t(-16), 0, 0};
struct FakeTypeinfo {
  const void* vptr;
  const char* name;
};
const FakeTypeinfo kFakeTypeinfo = {&kFakeTypeinfo, "5Fake"};
const uint64_t kFakeVtable[3] = {0, reinterpret_cast<uint64_t>(&kFakeTypeinfo), 0};

uint64_t Address(const void* p) {
  return reinterpret_cast<uint64_t>(p);
}

TEST(CxxTypeinfoTest, ReadsTheDynamicTypeOfARealObject) {
  Shape* shape = new Square;
  test::Blocks blocks({test::Range(static_cast<Square*>(shape))});
  CxxTypeinfo ti;
  ASSERT_TRUE(ti.Prepare());
  CxxTypeinfo::Found found;
  ASSERT_TRUE(ti.Read(*blocks.memory, Address(shape), &found));
  EXPECT_EQ(found.typeinfo, Address(&typeid(Square)));
  EXPECT_EQ(CxxTypeinfo::Demangle(CxxTypeinfo::MangledName(found.typeinfo)),
            "heapgraph::scanner::types::(anonymous namespace)::Square");
  // Twice: the second read comes from the cache and agrees.
  CxxTypeinfo::Found again;
  ASSERT_TRUE(ti.Read(*blocks.memory, Address(shape), &again));
  EXPECT_EQ(again.typeinfo, found.typeinfo);
  delete shape;
}

TEST(CxxTypeinfoTest, RejectsFakeVtablePointers) {
  auto* object = new Plain;
  auto* heap_vtable = new uint64_t[3]{0, Address(&typeid(Square)), 0};
  test::Blocks blocks({test::Range(object), test::Range(heap_vtable, 24)});
  CxxTypeinfo ti;
  ASSERT_TRUE(ti.Prepare());
  CxxTypeinfo::Found found;
  const uint64_t fakes[] = {
      0,                                          // null
      Address(heap_vtable) + 16,                  // a "vtable" in the heap
      Address(&kOffsetNotZero[2]),                // read-only, but offset-to-top is not 0
      Address(&kFakeVtable[2]),                   // its typeinfo's vptr is no type_info vtable
      Address("a string literal, not a vtable"),  // read-only data, no typeinfo before it
      Address(&found),                            // the stack
  };
  for (uint64_t fake : fakes) {
    object->words[0] = fake;
    EXPECT_FALSE(ti.Read(*blocks.memory, Address(object), &found)) << std::hex << fake;
  }
  delete[] heap_vtable;
  delete object;
}

TEST(CxxTypeinfoTest, WithoutTheAbiVtablesNothingValidates) {
  Shape* shape = new Square;
  test::Blocks blocks({test::Range(static_cast<Square*>(shape))});
  CxxTypeinfo ti;
  ti.PrepareWith(0, 0, 0);
  CxxTypeinfo::Found found;
  EXPECT_FALSE(ti.Read(*blocks.memory, Address(shape), &found));
  delete shape;
}

// Its cache is a 192 KiB table: a process without libstdc++'s vtables (a C program's check) gets
// none.
size_t AllocatedBytes() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

TEST(CxxTypeinfoTest, WithoutTheAbiVtablesNoCacheIsAllocated) {
  const size_t before = AllocatedBytes();
  CxxTypeinfo without;
  without.PrepareWith(0, 0, 0);
  EXPECT_EQ(AllocatedBytes(), before);
  CxxTypeinfo with;
  ASSERT_TRUE(with.Prepare());
  if (AllocatedBytes() == before) GTEST_SKIP() << "malloc does not count what it hands out";
  EXPECT_GE(AllocatedBytes(), before + 4096 * sizeof(uint64_t));
}

TEST(CxxTypeinfoTest, DemangleKeepsWhatDoesNotDemangle) {
  EXPECT_EQ(CxxTypeinfo::Demangle("11ChatSession"), "ChatSession");
  EXPECT_EQ(CxxTypeinfo::Demangle("*N2ns3FooE"), "ns::Foo");
  EXPECT_EQ(CxxTypeinfo::Demangle("not mangled"), "not mangled");
  EXPECT_EQ(CxxTypeinfo::MangledName(0), "");
}

}  // namespace
}  // namespace heapgraph::scanner::types
