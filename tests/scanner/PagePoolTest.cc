#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "scanner/MmapAllocator.h"
#include "scanner/PagePool.h"

namespace heapgraph::scanner {
namespace {

constexpr size_t kPage = PagePool::kPage;

TEST(PagePoolTest, TakesFreshPagesWhenEmpty) {
  PagePool pool;
  auto* p = static_cast<uint8_t*>(pool.Take(3 * kPage + 1));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kPage, 0u);
  for (size_t i = 0; i < 4 * kPage; ++i) ASSERT_EQ(p[i], 0) << i;  // fresh: zero, 4 pages usable
  pool.Give(p, 3 * kPage + 1);
  EXPECT_EQ(pool.kept_bytes(), 4 * kPage);
}

// The point of the pool: a given-back extent is handed out again as it is (already faulted in,
// its old contents still there), not replaced by fresh zero-filled pages.
TEST(PagePoolTest, ReusesGivenPagesWithTheirContents) {
  PagePool pool;
  auto* p = static_cast<uint8_t*>(pool.Take(8 * kPage));
  std::memset(p, 0xab, 8 * kPage);
  pool.Give(p, 8 * kPage);
  auto* q = static_cast<uint8_t*>(pool.Take(2 * kPage));
  EXPECT_EQ(q, p);  // the front of the extent
  EXPECT_EQ(q[0], 0xab);
  EXPECT_EQ(pool.kept_bytes(), 6 * kPage);
  auto* r = static_cast<uint8_t*>(pool.Take(6 * kPage));
  EXPECT_EQ(r, p + 2 * kPage);
  EXPECT_EQ(r[6 * kPage - 1], 0xab);
  EXPECT_EQ(pool.extent_count(), 0u);
  pool.Give(q, 2 * kPage);
  pool.Give(r, 6 * kPage);
}

TEST(PagePoolTest, TakesTheSmallestExtentLargeEnough) {
  PagePool pool;
  pool.Give(pool.Take(21 * kPage), 21 * kPage);  // carved in order below: no stray adjacency
  void* big = pool.Take(16 * kPage);
  void* guard = pool.Take(kPage);  // keeps the two extents apart
  void* small = pool.Take(4 * kPage);
  pool.Give(big, 16 * kPage);
  pool.Give(small, 4 * kPage);
  EXPECT_EQ(pool.Take(3 * kPage), small);
  EXPECT_EQ(pool.Take(8 * kPage), big);
  pool.Give(guard, kPage);
}

TEST(PagePoolTest, MergesAdjacentExtents) {
  PagePool pool;
  auto* p = static_cast<uint8_t*>(pool.Take(12 * kPage));
  pool.Give(p, 12 * kPage);
  void* a = pool.Take(4 * kPage);
  void* b = pool.Take(4 * kPage);
  void* c = pool.Take(4 * kPage);
  EXPECT_EQ(pool.extent_count(), 0u);
  pool.Give(a, 4 * kPage);
  pool.Give(c, 4 * kPage);
  EXPECT_EQ(pool.extent_count(), 2u);
  pool.Give(b, 4 * kPage);  // bridges the two
  EXPECT_EQ(pool.extent_count(), 1u);
  EXPECT_EQ(pool.Take(12 * kPage), p);
  pool.Give(p, 12 * kPage);
}

// Too large for any kept extent: the largest one is grown (mremap), its pages and contents kept.
TEST(PagePoolTest, GrowsTheLargestExtentKeepingItsPages) {
  constexpr size_t kMove = PagePool::kMinMoveBytes;
  PagePool pool;
  pool.Give(pool.Take(kMove + 3 * kPage), kMove + 3 * kPage);  // carved in order below
  void* small = pool.Take(2 * kPage);
  void* guard = pool.Take(kPage);  // keeps the two extents apart
  auto* p = static_cast<uint8_t*>(pool.Take(kMove));
  std::memset(p, 0x5a, kMove);
  pool.Give(small, 2 * kPage);
  pool.Give(p, kMove);
  auto* q = static_cast<uint8_t*>(pool.Take(4 * kMove));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q[0], 0x5a);
  EXPECT_EQ(q[kMove - 1], 0x5a);
  EXPECT_EQ(q[kMove], 0);  // the grown tail is fresh
  q[4 * kMove - 1] = 1;
  EXPECT_EQ(pool.kept_bytes(), 2 * kPage);  // the small one is still kept
  pool.Give(q, 4 * kMove);
  pool.Give(guard, kPage);
}

// Below kMinMoveBytes a larger Take maps fresh pages and leaves the kept extent where it is.
TEST(PagePoolTest, ASmallExtentIsNotMovedToGrow) {
  PagePool pool;
  auto* p = static_cast<uint8_t*>(pool.Take(3 * kPage));
  std::memset(p, 0x5a, 3 * kPage);
  pool.Give(p, 3 * kPage);
  auto* q = static_cast<uint8_t*>(pool.Take(16 * kPage));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(pool.kept_bytes(), 3 * kPage);
  EXPECT_EQ(p[0], 0x5a);  // still mapped, with its contents
  EXPECT_EQ(pool.Take(3 * kPage), p);
  pool.Give(p, 3 * kPage);
  pool.Give(q, 16 * kPage);
}

TEST(PagePoolTest, KeepsAtMostMaxExtentsDroppingTheSmallest) {
  PagePool pool;
  constexpr size_t kCount = PagePool::kMaxExtents + 1;
  size_t all = 0;
  for (size_t i = 0; i < kCount; ++i) all += (i + 1) * kPage;
  // Carved from one mapping in order: extent i, then a one-page gap that is never given back, so
  // that no two given extents are adjacent (separate mmaps may be).
  pool.Give(pool.Take(all + kCount * kPage), all + kCount * kPage);
  std::vector<void*> taken;
  for (size_t i = 0; i < kCount; ++i) {
    taken.push_back(pool.Take((i + 1) * kPage));
    pool.Take(kPage);
  }
  ASSERT_EQ(pool.extent_count(), 0u);
  for (size_t i = 0; i < kCount; ++i) pool.Give(taken[i], (i + 1) * kPage);
  EXPECT_EQ(pool.extent_count(), PagePool::kMaxExtents);
  EXPECT_EQ(pool.kept_bytes(), all - kPage);  // the one-page extent went
}

TEST(PagePoolTest, TrimUnmapsTheTailsOfTheLargestExtents) {
  PagePool pool;
  pool.Give(pool.Take(14 * kPage), 14 * kPage);  // carved in order below: no stray adjacency
  auto* big = static_cast<uint8_t*>(pool.Take(10 * kPage));
  void* guard = pool.Take(kPage);
  void* small = pool.Take(3 * kPage);
  std::memset(big, 1, 10 * kPage);
  pool.Give(big, 10 * kPage);
  pool.Give(small, 3 * kPage);
  pool.Trim(5 * kPage + 1);  // rounds up to 6 pages: 7 come off the 10-page extent
  EXPECT_EQ(pool.kept_bytes(), 6 * kPage);
  EXPECT_EQ(pool.extent_count(), 2u);
  EXPECT_EQ(pool.Take(3 * kPage), big);  // its front is still there, contents and all
  EXPECT_EQ(big[3 * kPage - 1], 1);
  pool.Trim(0);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  EXPECT_EQ(pool.extent_count(), 0u);
  pool.Give(big, 3 * kPage);
  pool.Give(guard, kPage);
}

// MmapAllocator's containers take from and give to the active pool: a vector freed and another
// made after it lands on the same, already written, pages.
TEST(PagePoolTest, MmapAllocatorUsesTheActivePool) {
  using Vec = std::vector<uint64_t, MmapAllocator<uint64_t>>;
  PagePool pool;
  PagePool::Activate(&pool);
  const uint64_t* first;
  {
    Vec v(100000, 7);
    first = v.data();
  }
  EXPECT_GE(pool.kept_bytes(), 100000 * sizeof(uint64_t));
  Vec w;
  w.reserve(50000);
  EXPECT_EQ(w.data(), first);
  w.assign(50000, 9);
  EXPECT_EQ(w[49999], 9u);
  PagePool::Activate(nullptr);
  Vec plain(10, 1);  // plain mmap again; `w` is unmapped when it goes
  EXPECT_EQ(plain[9], 1u);
}

// A pool kept from one scan to the next: Ranges() names what it keeps (the scans leave it out of
// their roots), TrimToPeak() keeps no more than the most a scan held at once plus its largest
// array, Release() empties it.
TEST(PagePoolTest, KeptPoolNamesItsExtentsAndTrimsToItsPeak) {
  PagePool pool;
  void* a = pool.Take(8 * kPage);
  void* b = pool.Take(4 * kPage);
  EXPECT_EQ(pool.peak_bytes(), 12 * kPage);
  pool.Give(b, 4 * kPage);
  pool.Give(a, 8 * kPage);
  pool.TrimToPeak();
  EXPECT_EQ(pool.kept_bytes(), 12 * kPage);  // all it had: below the peak plus 8 pages
  EXPECT_EQ(pool.peak_bytes(), 0u);          // the next scan's peak starts from what is in use
  size_t named = 0;
  for (const auto& [begin, end] : pool.Ranges()) {
    if (begin == end) continue;
    named += end - begin;
    EXPECT_EQ(begin % kPage, 0u);
  }
  EXPECT_EQ(named, 12 * kPage);
  // A smaller scan next: the pool shrinks to it and room for its largest array.
  pool.Give(pool.Take(2 * kPage), 2 * kPage);
  pool.TrimToPeak();
  EXPECT_EQ(pool.kept_bytes(), 4 * kPage);
  pool.Release();
  EXPECT_EQ(pool.kept_bytes(), 0u);
  EXPECT_EQ(pool.Ranges()[0], (std::pair<uint64_t, uint64_t>{0, 0}));
}

// Trimmed to its peak alone, a kept pool lost the tail its largest array had just grown into, and
// every scan faulted that tail in again: the margin keeps the largest array's room.
TEST(PagePoolTest, TrimToPeakKeepsRoomForTheLargestArray) {
  PagePool pool;
  void* mapped =
      mmap(nullptr, 20 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  pool.Give(mapped, 20 * kPage);  // kept, nothing in use
  void* a = pool.Take(6 * kPage);
  void* b = pool.Take(2 * kPage);
  EXPECT_EQ(pool.peak_bytes(), 8 * kPage);
  pool.Give(a, 6 * kPage);
  pool.Give(b, 2 * kPage);
  pool.TrimToPeak();
  EXPECT_EQ(pool.kept_bytes(), 14 * kPage);  // the peak, 8 pages, and the largest array, 6
  EXPECT_EQ(pool.extent_count(), 1u);        // one extent: the same scan again takes from it
  const auto kept = pool.Ranges()[0];
  auto* again = static_cast<char*>(pool.Take(6 * kPage));
  EXPECT_GE(reinterpret_cast<uint64_t>(again), kept.first);
  EXPECT_LE(reinterpret_cast<uint64_t>(again + 6 * kPage), kept.second);
  pool.Give(again, 6 * kPage);
  pool.Release();
}

}  // namespace
}  // namespace heapgraph::scanner
