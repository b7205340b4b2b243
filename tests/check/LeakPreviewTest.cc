// AddLeakPreviews (option leak_preview) on this process's own memory: a direct record's first
// block read as hex, cut to the asked bytes and to the block's size; indirect and suppressed
// records, and a block no longer mapped, get none (never a fault).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "check/LeakPreview.h"

namespace heapgraph::report {
namespace {

LeakRecord Direct(const void* block, uint64_t size) {
  LeakRecord r;
  r.kind = LeakKind::kDirect;
  r.size = size;
  r.count = 1;
  r.block_size = size;
  r.examples = {reinterpret_cast<uint64_t>(block)};
  return r;
}

TEST(LeakPreviewTest, FirstBytesOfTheFirstBlockAsHex) {
  static const char kBlock[16] = "heapgraph!";
  LeakReport report;
  report.leaks = {Direct(kBlock, sizeof(kBlock)), Direct(kBlock, 4)};
  AddLeakPreviews(report, 12);
  EXPECT_EQ(report.leaks[0].preview, "686561706772617068210000");
  EXPECT_EQ(report.leaks[1].preview, "68656170") << "cut to the block's size";
}

TEST(LeakPreviewTest, OnlyDirectUnsuppressedRecordsOfMappedBlocks) {
  static const char kBlock[8] = "abcdefg";
  void* gone = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  munmap(gone, 4096);
  LeakReport report;
  report.leaks = {Direct(kBlock, 8), Direct(kBlock, 8), Direct(gone, 64), Direct(kBlock, 8)};
  report.leaks[1].kind = LeakKind::kIndirect;
  report.leaks[3].suppressed = "leak:abc";
  AddLeakPreviews(report, 4);
  EXPECT_EQ(report.leaks[0].preview, "61626364");
  EXPECT_EQ(report.leaks[1].preview, "");
  EXPECT_EQ(report.leaks[2].preview, "") << "unmapped: no preview, no fault";
  EXPECT_EQ(report.leaks[3].preview, "");
}

}  // namespace
}  // namespace heapgraph::report
