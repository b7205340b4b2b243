// tests/heap: CategoryTotals: exact per-size totals, the VM entry, and the "other sizes" entry
// once more distinct sizes arrive than the table keeps.
#include <gtest/gtest.h>

#include <map>

#include "heap/pressure/CategoryTotals.h"

namespace heapgraph {
namespace {

std::map<std::pair<uint32_t, uint64_t>, std::pair<uint64_t, uint64_t>> Packed(CategoryTotals& t) {
  uint32_t n = 0;
  const format::CategoryTotal* entries = t.Pack(&n);
  std::map<std::pair<uint32_t, uint64_t>, std::pair<uint64_t, uint64_t>> m;
  for (uint32_t i = 0; i < n; ++i)
    m[{entries[i].kind, entries[i].size}] = {entries[i].count, entries[i].bytes};
  return m;
}

TEST(CategoryTotalsTest, CountsEachSizeExactly) {
  CategoryTotals t;
  ASSERT_TRUE(t.Map());
  for (int i = 0; i < 1000; ++i) t.AddHeap(48);
  for (int i = 0; i < 3; ++i) t.AddHeap(49152);
  t.SetVm(2, 8192);
  EXPECT_EQ(t.heap_count(), 1003u);
  EXPECT_EQ(t.heap_bytes(), 48000u + 3 * 49152u);
  EXPECT_FALSE(t.overflowed());
  auto m = Packed(t);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[std::make_pair(uint32_t{format::kCategoryHeap}, uint64_t{48})],
            std::make_pair(uint64_t{1000}, uint64_t{48000}));
  EXPECT_EQ(m[std::make_pair(uint32_t{format::kCategoryHeap}, uint64_t{49152})],
            std::make_pair(uint64_t{3}, uint64_t{3 * 49152}));
  EXPECT_EQ(m[std::make_pair(uint32_t{format::kCategoryVm}, uint64_t{0})],
            std::make_pair(uint64_t{2}, uint64_t{8192}));
}

TEST(CategoryTotalsTest, ClearStartsOver) {
  CategoryTotals t;
  ASSERT_TRUE(t.Map());
  t.AddHeap(16);
  (void)Packed(t);
  t.Clear();
  t.AddHeap(32);
  auto m = Packed(t);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.begin()->first.second, 32u);
}

TEST(CategoryTotalsTest, TooManySizesGoToOtherSizesWithoutLosingBytes) {
  CategoryTotals t;
  ASSERT_TRUE(t.Map());
  uint64_t bytes = 0, distinct = CategoryTotals::kCapacity;
  for (uint64_t s = 1; s <= distinct; ++s) {
    t.AddHeap(s);
    bytes += s;
  }
  EXPECT_TRUE(t.overflowed());
  uint64_t sum = 0, count = 0;
  for (const auto& [key, value] : Packed(t)) {
    count += value.first;
    sum += value.second;
  }
  EXPECT_EQ(count, distinct);
  EXPECT_EQ(sum, bytes);
}

}  // namespace
}  // namespace heapgraph
