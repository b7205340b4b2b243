// tests/scanner/types: ObjcClassCatalog — sorting, duplicates, lookups by class address.
#include <gtest/gtest.h>

#include "scanner/types/ObjcClassCatalog.h"

namespace heapgraph::scanner::types {
namespace {

ObjcClass Class(uint64_t address, const char* name, uint64_t size) {
  ObjcClass c;
  c.address = address;
  c.name = name;
  c.instance_size = size;
  c.ivars.push_back({0, "isa", "#", "NSObject"});
  return c;
}

TEST(ObjcClassCatalogTest, FindsEveryClassByItsExactAddress) {
  ObjcClassCatalog catalog;
  catalog.Assign({Class(0x3000, "C", 24), Class(0x1000, "A", 8), Class(0x2000, "B", 16),
                  Class(0x1000, "A again", 8)});
  ASSERT_EQ(catalog.size(), 3u);
  EXPECT_EQ(catalog.classes()[0].address, 0x1000u);
  EXPECT_EQ(catalog.classes()[2].address, 0x3000u);
  ASSERT_NE(catalog.Find(0x2000), nullptr);
  EXPECT_EQ(catalog.Find(0x2000)->name, "B");
  EXPECT_EQ(catalog.Find(0x3000)->instance_size, 24u);
  EXPECT_NE(catalog.Find(0x1000), nullptr);
  for (uint64_t miss : std::initializer_list<uint64_t>{0, 0xfff, 0x1008, 0x2fff, 0x3001, ~0ull}) {
    EXPECT_EQ(catalog.Find(miss), nullptr) << miss;
  }
}

TEST(ObjcClassCatalogTest, EmptyAndReassigned) {
  ObjcClassCatalog catalog;
  EXPECT_EQ(catalog.Find(0x1000), nullptr);
  catalog.Assign({Class(0x1000, "A", 8)});
  catalog.Assign({Class(0x2000, "B", 8)});
  EXPECT_EQ(catalog.Find(0x1000), nullptr);
  ASSERT_NE(catalog.Find(0x2000), nullptr);
  EXPECT_FALSE(catalog.Find(0x2000)->ivars[0].object_typed());  // "#" is a Class
}

TEST(ObjcClassCatalogTest, ObjectTypedEncodings) {
  for (const char* e : {"@", "@\"NSDate\"", "@?"})
    EXPECT_TRUE((ObjcIvar{0, "x", e, "A"}).object_typed());
  for (const char* e : {"", "#", ":", "^v", "i", "{?=ii}"}) {
    EXPECT_FALSE((ObjcIvar{0, "x", e, "A"}).object_typed()) << e;
  }
}

}  // namespace
}  // namespace heapgraph::scanner::types
