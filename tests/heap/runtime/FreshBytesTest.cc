// tests/heap/runtime: ClearFreshBytes zeroes exactly the range it is given, writes nothing into a
// large block that is a mapping of its own, and clears a large heap block's non-zero words;
// PrefetchFreshBytes changes no byte, faults no page in and survives lines it may not read.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "heap/runtime/FreshBytes.h"
#include "heap/runtime/GlibcChunk.h"

namespace heapgraph {
namespace {

// Under ASan the blocks are ASan's, without glibc's chunk header.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcBlocks = false;
#else
constexpr bool kGlibcBlocks = true;
#endif

// A block from malloc that the compiler cannot see into (reading its header is out of its bounds).
unsigned char* Allocate(size_t size) {
  void* p = malloc(size);
  asm volatile("" : "+r"(p));
  return static_cast<unsigned char*>(p);
}

bool AllBytesAre(const unsigned char* p, size_t n, unsigned char value) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != value) return false;
  }
  return true;
}

TEST(FreshBytesTest, SmallBlockIsClearedExactlyInTheRange) {
  auto* p = Allocate(200);
  memset(p, 0xab, 200);
  ClearFreshBytes(p, 13, 170);
  EXPECT_TRUE(AllBytesAre(p, 13, 0xab));
  EXPECT_TRUE(AllBytesAre(p + 13, 157, 0));
  EXPECT_TRUE(AllBytesAre(p + 170, 30, 0xab));
  ClearFreshBytes(p, 170, 170);  // empty: nothing
  ClearFreshBytes(p, 180, 170);
  EXPECT_TRUE(AllBytesAre(p + 170, 30, 0xab));
  free(p);
}

// Pages of a block that is a mapping of its own are never touched: still not resident after.
TEST(FreshBytesTest, MmappedBlockIsNotTouched) {
  if (!kGlibcBlocks) GTEST_SKIP() << "ASan's malloc: no glibc chunk header";
  const size_t size = 64 << 20;
  auto* p = Allocate(size);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(glibc_chunk::IsMmapped(p));
  ClearFreshBytes(p, 0, size);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto first_page = reinterpret_cast<uintptr_t>(p + page) & ~(page - 1);
  std::vector<unsigned char> resident(256);
  ASSERT_EQ(mincore(reinterpret_cast<void*>(first_page), 256 * page, resident.data()), 0);
  for (unsigned char r : resident) EXPECT_EQ(r & 1, 0);
  free(p);
}

// A large block carved from the heap (mmap threshold raised): every byte of the range reads zero,
// unaligned ends included.
TEST(FreshBytesTest, LargeHeapBlockIsClearedInTheRange) {
  if (!kGlibcBlocks) GTEST_SKIP() << "ASan's malloc: no glibc chunk header";
  ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, 32 << 20), 1);
  const size_t size = 1 << 20;
  auto* p = Allocate(size);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(glibc_chunk::IsMmapped(p));
  for (size_t i = 0; i < size; i += 4096) memset(p + i, 0x5a, 100);
  memset(p, 0x5a, 8);
  memset(p + size - 8, 0x5a, 8);
  ClearFreshBytes(p, 3, size - 5);
  EXPECT_TRUE(AllBytesAre(p, 3, 0x5a));
  EXPECT_TRUE(AllBytesAre(p + 3, size - 8, 0));
  EXPECT_TRUE(AllBytesAre(p + size - 5, 5, 0x5a));
  EXPECT_EQ(glibc_chunk::UsableSize(p), malloc_usable_size(p));
  free(p);
}

// A prefetch is a hint: the bytes stay, a page never touched stays unbacked, and lines of a page
// the process may not read (PROT_NONE) are dropped instead of faulting.
TEST(FreshBytesTest, PrefetchChangesNothingAndNeverFaults) {
  auto* p = Allocate(900);
  memset(p, 0xcd, 900);
  PrefetchFreshBytes(p, 0, 900);
  PrefetchFreshBytes(p, 500, 100);  // empty: nothing
  EXPECT_TRUE(AllBytesAre(p, 900, 0xcd));
  free(p);

  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* untouched =
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* forbidden = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(untouched, MAP_FAILED);
  ASSERT_NE(forbidden, MAP_FAILED);
  PrefetchFreshBytes(untouched, 0, 2 * page);
  PrefetchFreshBytes(forbidden, 0, page);
  unsigned char resident[2] = {1, 1};
  ASSERT_EQ(mincore(untouched, 2 * page, resident), 0);
  EXPECT_EQ(resident[0] & 1, 0);
  EXPECT_EQ(resident[1] & 1, 0);
  munmap(untouched, 2 * page);
  munmap(forbidden, page);
}

}  // namespace
}  // namespace heapgraph
