#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "scanner/RootRanges.h"

namespace heapgraph::scanner {
namespace {

using Range = std::pair<uint64_t, uint64_t>;

// Two private anonymous read-write mappings and one read-only file mapping; no heap blocks in any.
constexpr char kMaps[] =
    "10000000-10010000 rw-p 00000000 00:00 0\n"
    "10020000-10030000 r--p 00000000 08:01 42 /usr/lib/libx.so\n"
    "10040000-10080000 rw-p 00000000 00:00 0\n";

std::vector<Range> Roots(std::vector<Range> exclude) {
  roots::ProcessMappings mappings;
  mappings.ParseText(kMaps);
  std::vector<BlockRange, MmapAllocator<BlockRange>> none;
  BlockIndex index(std::move(none));
  RootRanges roots;
  roots.Compute(mappings, {}, index, /*caller_stack_pointer=*/0, {}, /*static_tls_size=*/0);
  roots.Exclude(exclude);
  std::vector<Range> out;
  for (const RootRange& r : roots.ranges()) out.emplace_back(r.begin, r.end);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RootRangesTest, WritablePrivateMappingsWithoutBlocksAreRoots) {
  EXPECT_EQ(Roots({}), (std::vector<Range>{{0x10000000, 0x10010000}, {0x10040000, 0x10080000}}));
}

TEST(RootRangesTest, ExcludeCutsHolesAndEdgesAndDropsCoveredRanges) {
  EXPECT_EQ(Roots({{0x10044000, 0x10046000}}),
            (std::vector<Range>{
                {0x10000000, 0x10010000}, {0x10040000, 0x10044000}, {0x10046000, 0x10080000}}));
  EXPECT_EQ(Roots({{0x0fff0000, 0x10001000}, {0x10070000, 0x20000000}}),
            (std::vector<Range>{{0x10001000, 0x10010000}, {0x10040000, 0x10070000}}));
  EXPECT_EQ(Roots({{0x10000000, 0x10010000}}), (std::vector<Range>{{0x10040000, 0x10080000}}));
  // Two holes in one range, an empty range, and a range between mappings change nothing else.
  EXPECT_EQ(Roots({{0x10050000, 0x10051000},
                   {0x10060000, 0x10061000},
                   {0x10005000, 0x10005000},
                   {0x10012000, 0x10018000}}),
            (std::vector<Range>{{0x10000000, 0x10010000},
                                {0x10040000, 0x10050000},
                                {0x10051000, 0x10060000},
                                {0x10061000, 0x10080000}}));
}

TEST(RootRangesTest, PreparedBuffersOfProcessMappingsAreReported) {
  roots::ProcessMappings mappings;
  mappings.Reserve(1 << 20, 1000);
  auto buffers = mappings.BufferRanges();
  EXPECT_GE(buffers[0].second - buffers[0].first, uint64_t{1} << 20);
  EXPECT_GE(buffers[1].second - buffers[1].first, 1000 * sizeof(roots::ProcessMappings::Mapping));
}

}  // namespace
}  // namespace heapgraph::scanner
