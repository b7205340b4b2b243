// tests/heap: ResidentPages on real mappings: a page written is in memory, one never written or
// dropped is not, a range is described from the page holding its start, and a range larger than
// the buffer or not mapped gets 0.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "heap/platform/ResidentPages.h"

namespace heapgraph {
namespace {

TEST(ResidentPagesTest, TellsWrittenPagesFromOthers) {
  const size_t page = static_cast<size_t>(getpagesize());
  auto* p = static_cast<char*>(
      mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  p[1 * page] = 1;
  p[3 * page + 7] = 1;
  const auto begin = reinterpret_cast<uintptr_t>(p);
  unsigned char resident[4] = {};
  ASSERT_EQ(4u, ResidentPages(begin + 10, begin + 4 * page, resident, 4));  // from begin's page
  EXPECT_EQ(0, resident[0] & 1);
  EXPECT_EQ(1, resident[1] & 1);
  EXPECT_EQ(0, resident[2] & 1);
  EXPECT_EQ(1, resident[3] & 1);
  ASSERT_EQ(0, madvise(p + 3 * page, page, MADV_DONTNEED));
  ASSERT_EQ(1u, ResidentPages(begin + 3 * page, begin + 3 * page + 1, resident, 4));
  EXPECT_EQ(0, resident[0] & 1);
  EXPECT_EQ(0u, ResidentPages(begin, begin + 4 * page, resident, 3));  // more than the buffer
  EXPECT_EQ(0u, ResidentPages(begin, begin, resident, 4));             // empty
  munmap(p, 4 * page);
  EXPECT_EQ(0u, ResidentPages(begin, begin + page, resident, 4));  // not mapped
}

}  // namespace
}  // namespace heapgraph
