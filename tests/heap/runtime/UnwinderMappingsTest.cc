// tests/heap: UnwinderMappings, the registry of the unwinder's own mappings: published ranges,
// forgetting by overlap (exact or partial unmaps), slot reuse, a full registry, and concurrent
// adds and forgets from real threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "heap/runtime/UnwinderMappings.h"

namespace heapgraph {
namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

Ranges Published(const UnwinderMappings& m) {
  Ranges out;
  m.ForEach([&](uint64_t b, uint64_t e) { out.push_back({b, e}); });
  std::sort(out.begin(), out.end());
  return out;
}

TEST(UnwinderMappingsTest, PublishesAddedRangesAndRefusesEmptyOnes) {
  auto m = std::make_unique<UnwinderMappings>();
  EXPECT_TRUE(m->Add(0x10000, 0x50000));
  EXPECT_TRUE(m->Add(0x90000, 0xa0000));
  EXPECT_FALSE(m->Add(0x20000, 0x20000));
  EXPECT_FALSE(m->Add(0, 0x1000));
  EXPECT_EQ(Published(*m), (Ranges{{0x10000, 0x50000}, {0x90000, 0xa0000}}));
}

TEST(UnwinderMappingsTest, ForgetsEveryRangeAnUnmapTouches) {
  auto m = std::make_unique<UnwinderMappings>();
  m->Add(0x10000, 0x50000);
  m->Add(0x50000, 0x60000);
  m->Add(0x90000, 0xa0000);
  m->Forget(0x50000, 0x60000);  // exact
  EXPECT_EQ(Published(*m), (Ranges{{0x10000, 0x50000}, {0x90000, 0xa0000}}));
  m->Forget(0x4f000, 0x50000);  // the last page only: the whole range goes
  EXPECT_EQ(Published(*m), (Ranges{{0x90000, 0xa0000}}));
  m->Forget(0xa0000, 0xb0000);  // adjacent, not overlapping
  m->Forget(0x80000, 0x90000);
  EXPECT_EQ(Published(*m), (Ranges{{0x90000, 0xa0000}}));
  m->Forget(0x0, 0x100000);  // a larger unmap covering it
  EXPECT_TRUE(Published(*m).empty());
}

TEST(UnwinderMappingsTest, ReusesFreedSlotsAndRefusesWhenFull) {
  auto m = std::make_unique<UnwinderMappings>();
  constexpr uint64_t kPage = 0x1000;
  for (uint64_t i = 0; i < UnwinderMappings::kCapacity; ++i) {
    ASSERT_TRUE(m->Add((i + 1) * kPage, (i + 2) * kPage - 1));
  }
  EXPECT_FALSE(m->Add(0x7000'0000'0000, 0x7000'0001'0000));
  EXPECT_EQ(m->refused(), 1u);
  m->Forget(5 * kPage, 6 * kPage);  // frees the slot holding [5, 6) pages
  EXPECT_TRUE(m->Add(0x7000'0000'0000, 0x7000'0001'0000));
  Ranges all = Published(*m);
  EXPECT_EQ(all.size(), UnwinderMappings::kCapacity);
  EXPECT_EQ(all.back(), (std::pair<uint64_t, uint64_t>{0x7000'0000'0000, 0x7000'0001'0000}));
}

// Threads add and forget their own ranges (like threads creating and freeing their caches);
// each checks that its live ranges stay published. Nothing stays published at the end.
TEST(UnwinderMappingsTest, ConcurrentAddsAndForgetsKeepEveryLiveRange) {
  auto m = std::make_unique<UnwinderMappings>();
  constexpr int kThreads = 4, kRounds = 2000, kLive = 8;
  std::vector<std::thread> threads;
  std::vector<int> missing(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t base = (static_cast<uint64_t>(t) + 1) << 32;
      for (int round = 0; round < kRounds; ++round) {
        uint64_t begin = base + static_cast<uint64_t>(round % kLive) * 0x100000;
        m->Forget(begin, begin + 0x40000);
        if (!m->Add(begin, begin + 0x40000)) ++missing[t];
        bool seen = false;
        m->ForEach(
            [&](uint64_t b, uint64_t e) { seen = seen || (b == begin && e == begin + 0x40000); });
        if (!seen) ++missing[t];
      }
      for (int i = 0; i < kLive; ++i) m->Forget(base + i * 0x100000, base + (i + 1) * 0x100000);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(missing[t], 0) << "thread " << t;
  EXPECT_TRUE(Published(*m).empty());
}

}  // namespace
}  // namespace heapgraph
