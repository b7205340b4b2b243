// tests/roots: ScratchPages, the stop's scratch memory that costs only the pages written: zeros
// when mapped, zeros again after Zero() with the written pages given back (mincore), kept when
// large enough, remapped when not.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "roots/ScratchPages.h"

namespace heapgraph::roots {
namespace {

size_t ResidentPages(const ScratchPages& scratch) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::span<uint8_t> bytes = scratch.bytes();
  std::vector<unsigned char> resident(bytes.size() / page);
  EXPECT_EQ(0, mincore(bytes.data(), bytes.size(), resident.data()));
  return static_cast<size_t>(std::count_if(resident.begin(), resident.end(),
                                           [](unsigned char r) { return (r & 1) != 0; }));
}

TEST(ScratchPagesTest, ATableForEveryThreadIdCostsThePagesWritten) {
  ScratchPages seen;
  ASSERT_TRUE(seen.Reserve(4194304 + 1));  // pid_max on 64-bit Debian 12
  ASSERT_GE(seen.bytes().size(), 4194305u);
  EXPECT_EQ(0u, ResidentPages(seen));
  for (size_t id : {1u, 2000000u, 4194304u}) seen.bytes()[id] = 1;
  EXPECT_EQ(3u, ResidentPages(seen));
  seen.Zero();
  EXPECT_EQ(0u, ResidentPages(seen));
  for (size_t id : {1u, 2000000u, 4194304u}) EXPECT_EQ(0, seen.bytes()[id]);
}

TEST(ScratchPagesTest, KeepsAMappingLargeEnoughAndRemapsOneTooSmall) {
  ScratchPages scratch;
  EXPECT_EQ(scratch.range(), (std::pair<uint64_t, uint64_t>{0, 0}));
  ASSERT_TRUE(scratch.Reserve(100));
  const auto first = scratch.range();
  EXPECT_EQ(first.second - first.first, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  scratch.bytes()[7] = 7;
  ASSERT_TRUE(scratch.Reserve(50));
  EXPECT_EQ(scratch.range(), first);
  EXPECT_EQ(7, scratch.bytes()[7]);  // kept as it was: the caller zeroes
  ASSERT_TRUE(scratch.Reserve(3 * first.second - 3 * first.first));
  EXPECT_GE(scratch.bytes().size(), 3 * (first.second - first.first));
  EXPECT_EQ(0, scratch.bytes()[7]);  // a new mapping
}

}  // namespace
}  // namespace heapgraph::roots
