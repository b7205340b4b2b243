// tests/heap: RootRegions, the table behind __lsan_register_root_region: registered ranges appear
// in Slots(), unregistering needs the exact range (one registration at a time), and bad calls
// (empty region, unknown region, full table) are one line each and change nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "heap/runtime/RootRegions.h"
#include "tests/StderrCapture.h"

namespace heapgraph {
namespace {

int CountOf(uint64_t begin, uint64_t size) {
  int n = 0;
  const HeapgraphRootRegion* slots = RootRegions::Slots();
  for (int i = 0; i < RootRegions::kSlots; ++i) {
    n += slots[i].begin == begin && slots[i].size == size ? 1 : 0;
  }
  return n;
}

int Used() {
  int n = 0;
  const HeapgraphRootRegion* slots = RootRegions::Slots();
  for (int i = 0; i < RootRegions::kSlots; ++i) n += slots[i].begin != 0 ? 1 : 0;
  return n;
}

TEST(RootRegionsTest, RegisterAndUnregisterExactRanges) {
  char area[256] = {};
  ASSERT_TRUE(RootRegions::Register(area, 128));
  ASSERT_TRUE(RootRegions::Register(area, 128));  // twice: two slots
  ASSERT_TRUE(RootRegions::Register(area + 8, 64));
  auto begin = reinterpret_cast<uint64_t>(area);
  EXPECT_EQ(CountOf(begin, 128), 2);
  EXPECT_EQ(CountOf(begin + 8, 64), 1);
  StderrCapture capture;
  EXPECT_FALSE(RootRegions::Unregister(area, 64));  // another size: not registered
  EXPECT_NE(capture.Text().find("heapgraph: __lsan_unregister_root_region: this region was never "
                                "registered: 0x"),
            std::string::npos);
  EXPECT_TRUE(RootRegions::Unregister(area, 128));
  EXPECT_EQ(CountOf(begin, 128), 1);
  EXPECT_TRUE(RootRegions::Unregister(area, 128));
  EXPECT_TRUE(RootRegions::Unregister(area + 8, 64));
  EXPECT_EQ(Used(), 0);
}

TEST(RootRegionsTest, EmptyRegionAndFullTableAreOneLineEach) {
  char area[8] = {};
  {
    StderrCapture capture;
    EXPECT_FALSE(RootRegions::Register(area, 0));
    EXPECT_FALSE(RootRegions::Register(nullptr, 16));
    std::string text = capture.Text();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  }
  for (int i = 0; i < RootRegions::kSlots; ++i) ASSERT_TRUE(RootRegions::Register(area, 8));
  StderrCapture capture;
  EXPECT_FALSE(RootRegions::Register(area, 8));
  EXPECT_NE(capture.Text().find("the table of root regions is full"), std::string::npos);
  for (int i = 0; i < RootRegions::kSlots; ++i) ASSERT_TRUE(RootRegions::Unregister(area, 8));
  EXPECT_EQ(Used(), 0);
}

}  // namespace
}  // namespace heapgraph
