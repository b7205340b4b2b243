// tests/report: FrameList reads like a vector of frames, shares frames between lists, compares by
// value, and replaces a frame in one list without touching the others that shared it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "report/FrameList.h"

namespace heapgraph::report {
namespace {

ReportFrame Frame(uint64_t address, const std::string& function) {
  ReportFrame f;
  f.address = address;
  f.function = function;
  f.module = "libx.so";
  f.module_path = "/usr/lib/libx.so";
  f.build_id = "00112233445566778899aabbccddeeff00112233";
  f.file = "/src/x.cc";
  f.line = 7;
  return f;
}

TEST(FrameListTest, ReadsLikeAVectorInOrder) {
  FrameList list{Frame(1, "a"), Frame(2, "b")};
  list.push_back(Frame(3, "c"));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_FALSE(list.empty());
  EXPECT_EQ(list[1].function, "b");
  EXPECT_EQ(list.front().address, 1u);
  EXPECT_EQ(list.back().address, 3u);
  std::string names;
  for (const ReportFrame& f : list) names += f.function;
  EXPECT_EQ(names, "abc");
  EXPECT_EQ(list.end() - list.begin(), 3);
  EXPECT_EQ(
      std::count_if(list.begin(), list.end(), [](const ReportFrame& f) { return f.line == 7; }), 3);
  std::vector<ReportFrame> copy = list.ToVector();
  ASSERT_EQ(copy.size(), 3u);
  EXPECT_EQ(copy[2], list[2]);
  EXPECT_TRUE(FrameList().empty());
}

TEST(FrameListTest, SharesFramesAndComparesByValue) {
  FrameList shared{Frame(1, "a")};
  FrameList first, second;
  first.append(shared);
  first.push_back(Frame(2, "b"));
  second.append(shared);
  second.push_back(Frame(2, "b"));  // equal, not shared
  EXPECT_EQ(&first[0], &second[0]);
  EXPECT_NE(&first[1], &second[1]);
  EXPECT_EQ(first, second);
  FrameList longer = first;
  longer.push_back(Frame(3, "c"));
  EXPECT_NE(first, longer);
  ReportFrame other = Frame(2, "b");
  other.line = 8;
  FrameList different{Frame(1, "a"), other};
  EXPECT_NE(first, different);
}

TEST(FrameListTest, ReplaceLeavesTheListsThatSharedTheFrame) {
  FrameList shared{Frame(1, "a")};
  FrameList edited = shared;
  ReportFrame f = edited[0];
  f.function = "edited";
  edited.replace(0, f);
  EXPECT_EQ(edited[0].function, "edited");
  EXPECT_EQ(shared[0].function, "a");
  EXPECT_THROW(edited.replace(5, f), std::out_of_range);
}

}  // namespace
}  // namespace heapgraph::report
