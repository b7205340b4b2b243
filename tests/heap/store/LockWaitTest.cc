// tests/heap: the timed lock waits (heap/store/LockWait.h) with real threads on a real shard lock
// (heap/store/ShardLock.h): a thread that sleeps on a lock held across the window is counted, the
// count is bounded by the window (a wait that began before it counts only from its opening), the
// fast path is never timed, Longest lets a woken waiter finish first, and a wait begun after the
// window's close is neither counted nor waited for. No wall-clock bound: every bound is a time the
// test itself read on the same clock (or the settle time, which a wait never ended would reach).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "heap/store/LockWait.h"
#include "heap/store/ShardLock.h"
#include "tests/heap/store/LockWordPoll.h"

namespace heapgraph {
namespace {

using lock_word::Reaches;

constexpr unsigned kSettleMs = 60000;  // the waiter is woken: it always ends its wait in time

TEST(LockWaitTest, AThreadWaitingOnAHeldLockIsTimedWithinTheWindow) {
  LockWaitWindow& window = LockWait::Window();
  std::atomic<uint32_t> lock{0};
  const uint64_t opened = LockWait::NowNs();
  LockWait::Open(window);
  LockShard(lock);
  std::thread waiter([&] {
    LockShard(lock);
    UnlockShard(lock);
  });
  ASSERT_TRUE(Reaches(lock, shard_lock::kContended)) << "the waiter never went to the futex";
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const uint64_t unlocked = LockWait::NowNs();
  UnlockShard(lock);
  double longest = LockWait::Longest(window, kSettleMs);
  const uint64_t read = LockWait::NowNs();
  waiter.join();
  EXPECT_EQ(window.waiting.load(), 0u);
  EXPECT_GT(longest, 0.0);
  EXPECT_LE(longest, static_cast<double>(read - opened) / 1e6);
  // It waited at least from kContended (seen after it began) until the unlock: > the 2 ms sleep.
  EXPECT_GE(longest, 2.0) << "unlocked " << static_cast<double>(unlocked - opened) / 1e6 << " ms";
}

TEST(LockWaitTest, AWaitThatBeganBeforeTheWindowCountsFromItsOpening) {
  LockWaitWindow& window = LockWait::Window();
  std::atomic<uint32_t> lock{0};
  LockShard(lock);
  std::thread waiter([&] {
    LockShard(lock);
    UnlockShard(lock);
  });
  ASSERT_TRUE(Reaches(lock, shard_lock::kContended));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // waited before the window
  const uint64_t opened = LockWait::NowNs();
  LockWait::Open(window);
  UnlockShard(lock);
  double longest = LockWait::Longest(window, kSettleMs);
  const uint64_t read = LockWait::NowNs();
  waiter.join();
  EXPECT_LE(longest, static_cast<double>(read - opened) / 1e6);
}

TEST(LockWaitTest, TheFastPathIsNotTimed) {
  LockWaitWindow& window = LockWait::Window();
  std::atomic<uint32_t> lock{0};
  LockWait::Open(window);
  for (int i = 0; i < 1000; ++i) {
    LockShard(lock);
    UnlockShard(lock);
  }
  EXPECT_EQ(LockWait::Longest(window, kSettleMs), 0.0);
  EXPECT_EQ(window.waiting.load(), 0u);
}

// Longest(window), while another thread ends the wait `began` 5 ms from now: Longest returns once
// that wait has ended.
double LongestWhileAWaitEndsIn5Ms(LockWaitWindow& window, uint64_t began) {
  std::thread ender([began] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    LockWait::End(began);
  });
  double longest = LockWait::Longest(window, kSettleMs);
  ender.join();
  return longest;
}

TEST(LockWaitTest, LongestWaitsForAWaiterStillInsideItsWait) {
  LockWaitWindow& window = LockWait::Window();
  LockWait::Open(window);
  const uint64_t began = LockWait::Begin();
  double longest = LongestWhileAWaitEndsIn5Ms(window, began);
  EXPECT_GE(longest, 5.0);
}

TEST(LockWaitTest, AWaitBegunAfterTheCloseIsNeitherCountedNorAwaited) {
  LockWaitWindow& window = LockWait::Window();
  LockWait::Open(window);
  LockWait::Close(window);  // the check's unlock
  const uint64_t began = LockWait::Begin();
  const uint64_t before = LockWait::NowNs();
  // Awaited, it would hold Longest for the whole settle time: it never ends before Longest returns.
  double longest = LockWait::Longest(window, kSettleMs);
  const uint64_t after = LockWait::NowNs();
  LockWait::End(began);
  EXPECT_EQ(longest, 0.0);
  EXPECT_LT(after - before, uint64_t{kSettleMs} * 1000000ull / 2);
  EXPECT_EQ(LockWait::Longest(window, kSettleMs), 0.0);  // its end did not count either
  EXPECT_EQ(window.waiting.load(), 0u);
}

TEST(LockWaitTest, AWaitBegunBeforeTheCloseIsAwaited) {
  LockWaitWindow& window = LockWait::Window();
  LockWait::Open(window);
  const uint64_t began = LockWait::Begin();
  LockWait::Close(window);
  double longest = LongestWhileAWaitEndsIn5Ms(window, began);
  EXPECT_GE(longest, 5.0);
  EXPECT_LE(window.pending_at_close.load(), 0);
}

TEST(LockWaitTest, NothingIsKeptBeforeAWindowOpens) {
  LockWaitWindow fresh;  // never opened
  EXPECT_EQ(LockWait::Longest(fresh, 0), 0.0);
}

}  // namespace
}  // namespace heapgraph
