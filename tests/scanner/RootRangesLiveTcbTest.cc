// tests/scanner: RootRanges on this process's own map. The main thread's control block and static
// TLS live in a mapping of ld.so's; program memory mapped right below it merges with it into one
// mapping, whose top then holds a thread control block like the cached stack of an exited
// thread. It belongs to a live thread: the whole mapping is a root, not only its top. And the
// pages of a top that were never written are not read. (To fold into RootRangesTest.cc once that
// file exists on main.)
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "roots/ProcessMappings.h"
#include "scanner/RootRanges.h"

namespace heapgraph::scanner {
namespace {

TEST(RootRangesLiveTcb, MemoryMergedBelowTheMainThreadsControlBlockIsARoot) {
  const auto tcb = reinterpret_cast<uintptr_t>(pthread_self());
  ASSERT_GT(RootRanges::StaticTlsSize(), 0u);
  roots::ProcessMappings before;
  ASSERT_TRUE(before.Read());
  const roots::ProcessMappings::Mapping* tls = before.Find(tcb);
  ASSERT_NE(tls, nullptr);
  // The control block must lie in the top static-TLS-size bytes of the mapping, as it does with
  // libheapgraph.so loaded (its initial-exec TLS makes glibc's static TLS ~20 KiB); this process
  // may have less, so the size passed is at least that distance.
  const uint64_t tls_size =
      std::max<uint64_t>(RootRanges::StaticTlsSize(), (tls->end - tcb + 128) & ~63ull);
  const size_t size = (4 * tls_size + 4095) & ~size_t{4095};
  void* p = mmap(reinterpret_cast<void*>(tls->start - size), size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) GTEST_SKIP() << "the address space below the TLS mapping is taken";
  std::memset(p, 0, size);
  const auto begin = reinterpret_cast<uint64_t>(p);
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read());
  const roots::ProcessMappings::Mapping* merged = mappings.Find(begin);
  ASSERT_NE(merged, nullptr);
  if (merged->end <= tcb) {
    munmap(p, size);
    GTEST_SKIP() << "the kernel did not merge the mappings";
  }
  roots::ThreadInfo self;
  self.tid = gettid();
  self.is_caller = true;
  self.stack_pointer = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#if defined(__x86_64__)
  self.regs[roots::ThreadInfo::kFsBase] = tcb;
#endif
  BlockIndex no_blocks({});
  RootRanges roots;
  roots.Compute(mappings, {&self, 1}, no_blocks, self.stack_pointer, {}, tls_size);
  bool covered = false;
  for (const RootRange& r : roots.ranges()) covered |= r.begin <= begin && begin + size <= r.end;
  munmap(p, size);
  EXPECT_TRUE(covered);
}

// A 1 MiB private anonymous mapping (no huge pages) whose last `written_pages` pages are written,
// given to RootRanges::Compute with `tls_size`: `whole` says whether it came out a root whole, and
// `resident` holds mincore's answer for its last four pages afterwards. False when the kernel
// merged the mapping with another (the caller skips).
bool ComputeOnTopWritten(size_t written_pages, uint64_t tls_size, bool* whole,
                         unsigned char (&resident)[4]) {
  constexpr size_t kSize = 1 << 20, kPage = 4096;
  void* p = mmap(nullptr, kSize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  if (p == MAP_FAILED) return false;
  madvise(p, kSize, MADV_NOHUGEPAGE);
  std::memset(static_cast<char*>(p) + kSize - written_pages * kPage, 0, written_pages * kPage);
  const auto begin = reinterpret_cast<uint64_t>(p);
  roots::ProcessMappings mappings;
  EXPECT_TRUE(mappings.Read());
  const roots::ProcessMappings::Mapping* m = mappings.Find(begin);
  const bool alone = m != nullptr && m->start == begin && m->end == begin + kSize;
  if (alone) {
    BlockIndex no_blocks({});
    RootRanges roots;
    roots.Compute(mappings, {}, no_blocks, reinterpret_cast<uint64_t>(__builtin_frame_address(0)),
                  {}, tls_size);
    *whole = false;
    for (const RootRange& r : roots.ranges()) *whole |= r.begin == begin && r.end == begin + kSize;
    EXPECT_EQ(0, mincore(reinterpret_cast<void*>(begin + kSize - sizeof(resident) * kPage),
                         sizeof(resident) * kPage, resident));
  }
  munmap(p, kSize);
  return alone;
}

// A mapping whose top was never written holds no control block: its top is not read (a read
// maps a zero page and a page table) and the mapping is a root whole.
TEST(RootRangesLiveTcb, AMappingsUnwrittenTopIsNotRead) {
  bool whole = false;
  unsigned char resident[4] = {1, 1, 1, 1};
  if (!ComputeOnTopWritten(0, std::max<uint64_t>(RootRanges::StaticTlsSize(), 8192), &whole,
                           resident)) {
    GTEST_SKIP() << "the kernel merged the mapping with another";
  }
  EXPECT_TRUE(whole);
  for (unsigned char r : resident) EXPECT_EQ(0, r & 1);
}

// Nor is a page of the top that is not in memory when another one is: only the written last page
// is read.
TEST(RootRangesLiveTcb, OnlyTheTopsPagesInMemoryAreRead) {
  bool whole = false;
  unsigned char resident[4] = {1, 1, 1, 1};
  if (!ComputeOnTopWritten(1, std::max<uint64_t>(RootRanges::StaticTlsSize(), 16384), &whole,
                           resident)) {
    GTEST_SKIP() << "the kernel merged the mapping with another";
  }
  EXPECT_TRUE(whole);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(0, resident[i] & 1) << "page " << i;
  EXPECT_EQ(1, resident[3] & 1);
}

}  // namespace
}  // namespace heapgraph::scanner
