// tests/heap: the shard lock (heap/store/ShardLock.h): mutual exclusion among real threads, a
// waiter of a long hold that goes to sleep on the futex (the word shows kContended) and is woken
// by the unlock, and the same between two processes sharing the word in a MAP_SHARED mapping, as
// the shard headers are.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "heap/store/ShardLock.h"
#include "tests/heap/store/LockWordPoll.h"

namespace heapgraph {
namespace {

using lock_word::Reaches;

TEST(ShardLockTest, ThreadsIncrementingUnderTheLockLoseNoIncrement) {
  std::atomic<uint32_t> lock{0};
  uint64_t counter = 0;  // not atomic: only the lock orders the increments
  constexpr int kThreads = 4;
  constexpr int kIncrements = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        LockShard(lock);
        ++counter;
        UnlockShard(lock);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter, uint64_t{kThreads} * kIncrements);
  EXPECT_EQ(lock.load(), shard_lock::kFree);
}

TEST(ShardLockTest, AWaiterOfALongHoldSleepsAndTheUnlockWakesIt) {
  std::atomic<uint32_t> lock{0};
  LockShard(lock);
  EXPECT_EQ(lock.load(), shard_lock::kHeld);
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    LockShard(lock);
    acquired = true;
    UnlockShard(lock);
  });
  ASSERT_TRUE(Reaches(lock, shard_lock::kContended)) << "the waiter never went to the futex";
  EXPECT_FALSE(acquired.load());
  UnlockShard(lock);
  waiter.join();
  EXPECT_TRUE(acquired.load());
  EXPECT_EQ(lock.load(), shard_lock::kFree);
}

TEST(ShardLockTest, AnotherProcessWaitsOnTheSharedWordAndIsWoken) {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto& lock = *new (page) std::atomic<uint32_t>(0);
  LockShard(lock);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    LockShard(lock);
    UnlockShard(lock);
    _exit(0);
  }
  const bool slept = Reaches(lock, shard_lock::kContended);
  UnlockShard(lock);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(slept) << "the child never went to the futex";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(lock.load(), shard_lock::kFree);
  munmap(page, 4096);
}

}  // namespace
}  // namespace heapgraph
