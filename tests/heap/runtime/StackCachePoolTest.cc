// tests/heap: StackCachePool. Caches are distinct, zero-filled slots of one region that the first
// Take reserves and publishes; a given-back cache is handed out again as it was left; the region
// runs out after kSlots caches and a given-back one serves again; threads taking and giving back
// at once never hold the same cache.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "heap/runtime/StackCachePool.h"
#include "heap/runtime/UnwinderMappings.h"

namespace heapgraph {
namespace {

constexpr uint64_t kCacheBytes = StackCachePool::kEntries * sizeof(StackCachePool::Entry);

bool AllZero(const StackCachePool::Entry* cache) {
  for (uint32_t i = 0; i < StackCachePool::kEntries; ++i) {
    if (cache[i].hash != 0 || cache[i].id != 0) return false;
  }
  return true;
}

TEST(StackCachePoolTest, TheFirstTakeReservesAndPublishesTheRegion) {
  auto registry = std::make_unique<UnwinderMappings>();
  auto pool = std::make_unique<StackCachePool>();
  pool->PublishTo(registry.get());
  std::vector<std::pair<uint64_t, uint64_t>> published;
  auto record = [&published](uint64_t b, uint64_t e) { published.emplace_back(b, e); };
  registry->ForEach(record);
  EXPECT_TRUE(published.empty());
  StackCachePool::Entry* a = pool->Take();
  StackCachePool::Entry* b = pool->Take();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  registry->ForEach(record);
  ASSERT_EQ(published.size(), 1u) << "one region, published once";
  const uint64_t begin = published[0].first, end = published[0].second;
  EXPECT_EQ(end - begin, StackCachePool::kSlots * kCacheBytes);
  for (auto* cache : {a, b}) {
    auto at = reinterpret_cast<uintptr_t>(cache);
    EXPECT_GE(at, begin);
    EXPECT_LE(at + kCacheBytes, end);
    EXPECT_EQ((at - begin) % kCacheBytes, 0u);
    EXPECT_TRUE(AllZero(cache));
  }
  EXPECT_NE(a, b);
}

TEST(StackCachePoolTest, AGivenBackCacheIsHandedOutAsItWasLeft) {
  auto pool = std::make_unique<StackCachePool>();
  StackCachePool::Entry* a = pool->Take();
  ASSERT_NE(a, nullptr);
  a[7] = {0x1234567890abcdefull, 42};
  pool->Give(a);
  StackCachePool::Entry* again = pool->Take();
  EXPECT_EQ(again, a);
  EXPECT_EQ(again[7].hash, 0x1234567890abcdefull);
  EXPECT_EQ(again[7].id, 42u);
  // Not a cache of this pool: ignored.
  StackCachePool::Entry outside[StackCachePool::kEntries] = {};
  pool->Give(outside);
  pool->Give(nullptr);
  EXPECT_NE(pool->Take(), outside);
}

TEST(StackCachePoolTest, TheRegionRunsOutAndAGivenBackCacheServesAgain) {
  auto pool = std::make_unique<StackCachePool>();
  std::set<StackCachePool::Entry*> taken;
  for (uint32_t i = 0; i < StackCachePool::kSlots; ++i) {
    StackCachePool::Entry* cache = pool->Take();
    ASSERT_NE(cache, nullptr) << i;
    taken.insert(cache);
  }
  EXPECT_EQ(taken.size(), StackCachePool::kSlots);
  EXPECT_EQ(pool->Take(), nullptr);
  EXPECT_EQ(pool->Take(), nullptr);
  StackCachePool::Entry* some = *std::next(taken.begin(), 100);
  pool->Give(some);
  EXPECT_EQ(pool->Take(), some);
  EXPECT_EQ(pool->Take(), nullptr);
}

// Each thread marks the cache it holds with its own number and checks the mark before giving it
// back: a cache handed to two threads at once would show the other's mark.
TEST(StackCachePoolTest, ThreadsTakingAndGivingBackNeverShareACache) {
  auto pool = std::make_unique<StackCachePool>();
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::atomic<int> clashes{0};
  std::vector<std::thread> threads;
  for (int t = 1; t <= kThreads; ++t) {
    threads.emplace_back([&pool, &clashes, t] {
      for (int round = 0; round < kRounds; ++round) {
        StackCachePool::Entry* held[3];
        for (auto*& cache : held) {
          cache = pool->Take();
          if (cache == nullptr) return clashes.fetch_add(1000000), void();
          cache[0].id = static_cast<uint32_t>(t);
        }
        for (auto* cache : held) {
          if (cache[0].id != static_cast<uint32_t>(t)) clashes.fetch_add(1);
          pool->Give(cache);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(clashes.load(), 0);
  // At most 3 caches per thread were ever held at once: the rest of the region was never taken.
  std::set<StackCachePool::Entry*> distinct;
  for (int i = 0; i < kThreads * 3; ++i) distinct.insert(pool->Take());
  EXPECT_EQ(distinct.count(nullptr), 0u);
}

}  // namespace
}  // namespace heapgraph
