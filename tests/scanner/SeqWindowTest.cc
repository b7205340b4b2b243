// tests/scanner: SeqWindow and KeepLeaked, the candidates of a delta check.
#include <gtest/gtest.h>

#include "scanner/SeqWindow.h"

namespace heapgraph::scanner {
namespace {

ScanResult ThreeLeaked() {
  ScanResult result;
  result.leaked = {{0x1000, 16, 1, 10}, {0x2000, 32, 2, 20}, {0x3000, 48, 3, 30}};
  result.edges = {{0, 1}, {1, 2}, {2, 0}};
  TypedObject object;
  object.leaked = 1;
  object.leaked_index = 2;
  result.typed.objects = {object};
  object.leaked_index = 0;
  result.typed.objects.push_back(object);
  return result;
}

TEST(SeqWindowTest, ContainsIsHalfOpenAndWrapsModulo32Bits) {
  SeqWindow window{"c", 10, 20};
  EXPECT_TRUE(window.Contains(10));
  EXPECT_TRUE(window.Contains(19));
  EXPECT_FALSE(window.Contains(20));
  EXPECT_FALSE(window.Contains(9));
  SeqWindow wrapped{"w", 0xFFFFFFF0ull, 0x100000010ull};
  EXPECT_TRUE(wrapped.Contains(0xFFFFFFFFu));
  EXPECT_TRUE(wrapped.Contains(5));
  EXPECT_FALSE(wrapped.Contains(0x20));
}

TEST(SeqWindowTest, LimitToWindowKeepsOnlyItsBlocksAndRenumbers) {
  ScanResult result = ThreeLeaked();
  EXPECT_EQ(LimitToWindow(result, SeqWindow{"c", 20, 31}), 2u);
  ASSERT_EQ(result.leaked.size(), 2u);
  EXPECT_EQ(result.leaked[0].address, 0x2000u);
  EXPECT_EQ(result.leaked[1].address, 0x3000u);
  ASSERT_EQ(result.edges.size(), 1u);  // 1 -> 2 became 0 -> 1; the others touched block 0
  EXPECT_EQ(result.edges[0], std::make_pair(0u, 1u));
  EXPECT_EQ(result.typed.objects[0].leaked_index, 1u);
  EXPECT_EQ(result.typed.objects[1].leaked_index, UINT32_MAX);
  EXPECT_EQ(result.typed.objects[1].leaked, 0);
}

TEST(SeqWindowTest, AnEmptyWindowKeepsNothing) {
  ScanResult result = ThreeLeaked();
  EXPECT_EQ(LimitToWindow(result, SeqWindow{"c", 40, 50}), 0u);
  EXPECT_TRUE(result.leaked.empty());
  EXPECT_TRUE(result.edges.empty());
}

}  // namespace
}  // namespace heapgraph::scanner
