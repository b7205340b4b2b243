// tests/scanner: PresentPages on this process's own memory: the untouched pages of a private
// anonymous mapping are skipped (every run, one page inside a range too), written pages are read,
// a file mapping is always read, and runs are clipped to the range asked for.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "scanner/PresentPages.h"

namespace heapgraph::scanner {
namespace {

using Span = std::pair<uint64_t, uint64_t>;

const uint64_t kSystemPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

// Parameter: whether PresentPages may ask with the PAGEMAP_SCAN ioctl (Linux 6.7+) or reads the
// pagemap entries (the fallback of older kernels).
class PresentPagesTest : public ::testing::TestWithParam<bool> {
 protected:
  // `pages` untouched pages of MAP_NORESERVE memory between two PROT_NONE pages, without
  // transparent huge pages (a write must make exactly one page exist).
  char* Map(size_t pages) {
    size_t bytes = (pages + 2) * kSystemPage;
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    mappings_.emplace_back(p, bytes);
    char* inner = static_cast<char*>(p) + kSystemPage;
    if (mprotect(inner, pages * kSystemPage, PROT_READ | PROT_WRITE) != 0) return nullptr;
    madvise(inner, pages * kSystemPage, MADV_NOHUGEPAGE);
    return inner;
  }
  void TearDown() override {
    for (auto [p, bytes] : mappings_) munmap(p, bytes);
  }
  // The runs to read in [begin, end) and the pages skipped, with this process's map.
  std::pair<std::vector<Span>, uint64_t> Runs(const void* begin, const void* end) {
    roots::ProcessMappings mappings;
    EXPECT_TRUE(mappings.Read());
    PresentPages pages(mappings, GetParam());
    EXPECT_TRUE(pages.available());
    std::vector<Span> runs;
    uint64_t skipped =
        pages.ForEachRun(reinterpret_cast<uint64_t>(begin), reinterpret_cast<uint64_t>(end),
                         [&](uint64_t b, uint64_t e) { runs.emplace_back(b, e); });
    return {runs, skipped};
  }
  static uint64_t A(const char* p) { return reinterpret_cast<uint64_t>(p); }

  std::vector<std::pair<void*, size_t>> mappings_;
};

TEST_P(PresentPagesTest, OnlyWrittenPagesOfASparseMappingAreRead) {
  constexpr size_t kPages = 16384;  // 64 MiB with 4 KiB pages
  char* area = Map(kPages);
  ASSERT_NE(area, nullptr);
  area[0] = 1;
  area[5000 * kSystemPage + 100] = 1;
  area[(kPages - 1) * kSystemPage] = 1;
  auto [runs, skipped] = Runs(area, area + kPages * kSystemPage);
  EXPECT_EQ(runs, (std::vector<Span>{
                      {A(area), A(area) + kSystemPage},
                      {A(area) + 5000 * kSystemPage, A(area) + 5001 * kSystemPage},
                      {A(area) + (kPages - 1) * kSystemPage, A(area) + kPages * kSystemPage}}));
  EXPECT_EQ(skipped, kPages - 3);
}

TEST_P(PresentPagesTest, AGapOfOnePageInsideARangeIsSkipped) {
  char* area = Map(256);
  ASSERT_NE(area, nullptr);
  area[0] = 1;
  area[2 * kSystemPage] = 1;  // page 1 was never written
  auto [runs, skipped] = Runs(area, area + 256 * kSystemPage);
  EXPECT_EQ(runs, (std::vector<Span>{{A(area), A(area) + kSystemPage},
                                     {A(area) + 2 * kSystemPage, A(area) + 3 * kSystemPage}}));
  EXPECT_EQ(skipped, 256u - 2);
}

// Skipping a short gap at either end of a range shortens the run, it adds none: such gaps are
// skipped, and so is a range that lies wholly in absent pages (the tail of a page a buffer ends
// in).
TEST_P(PresentPagesTest, ShortGapsAtTheEndsOfARangeAreSkipped) {
  char* area = Map(8);
  ASSERT_NE(area, nullptr);
  area[3 * kSystemPage] = 1;
  auto [runs, skipped] = Runs(area + 8, area + 8 * kSystemPage);
  EXPECT_EQ(runs, (std::vector<Span>{{A(area) + 3 * kSystemPage, A(area) + 4 * kSystemPage}}));
  EXPECT_EQ(skipped, 7u);
  auto [tail, one] = Runs(area + 5 * kSystemPage + 16, area + 6 * kSystemPage);
  EXPECT_TRUE(tail.empty());
  EXPECT_EQ(one, 1u);
}

TEST_P(PresentPagesTest, RunsAreClippedToTheRangeAskedFor) {
  char* area = Map(256);
  ASSERT_NE(area, nullptr);
  area[100 * kSystemPage] = 1;
  const char* begin = area + 40;                    // inside an absent page
  const char* end = area + 100 * kSystemPage + 24;  // inside the written page
  auto [runs, skipped] = Runs(begin, end);
  EXPECT_EQ(runs, (std::vector<Span>{{A(area) + 100 * kSystemPage, A(end)}}));
  EXPECT_EQ(skipped, 100u);
  auto [whole, none] = Runs(area + 100 * kSystemPage + 8, area + 100 * kSystemPage + 16);
  EXPECT_EQ(
      whole,
      (std::vector<Span>{{A(area) + 100 * kSystemPage + 8, A(area) + 100 * kSystemPage + 16}}));
  EXPECT_EQ(none, 0u);
}

// An absent page of a file mapping holds the file's bytes.
TEST_P(PresentPagesTest, FileMappingsAreAlwaysRead) {
  char path[] = "/tmp/heapgraph-present-pages-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(64 * kSystemPage)), 0);
  void* p = mmap(nullptr, 64 * kSystemPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  ASSERT_NE(p, MAP_FAILED);
  mappings_.emplace_back(p, 64 * kSystemPage);
  auto* area = static_cast<char*>(p);
  auto [runs, skipped] = Runs(area, area + 64 * kSystemPage);
  EXPECT_EQ(runs, (std::vector<Span>{{A(area), A(area) + 64 * kSystemPage}}));
  EXPECT_EQ(skipped, 0u);
}

INSTANTIATE_TEST_SUITE_P(Methods, PresentPagesTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ScanIoctl" : "PagemapEntries";
                         });

}  // namespace
}  // namespace heapgraph::scanner
