// heap/lag/MonitoredThreads on the test's own thread: units counted, nested pairs one unit, an
// unmatched end ignored, and the watched unit's whole run time kept even when many short units
// follow it before the watchdog's next check (the end record's duration in a real event loop); a
// released slot and a forked child's thread claim anew; threads that claim slots at the same
// moment never reset one another's running unit.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "heap/lag/MonitoredThreads.h"

namespace heapgraph {
namespace {

void SleepMs(long ms) {
  struct timespec t = {0, ms * 1000000};
  nanosleep(&t, nullptr);
}

TEST(MonitoredThreadsTest, NestedPairsAreOneUnitAndUnmatchedEndIsIgnored) {
  MonitoredThreads::BeginWork();
  MonitoredThread* t = MonitoredThreads::CurrentIfClaimed();
  ASSERT_NE(t, nullptr);
  uint64_t unit = t->unit.load();
  MonitoredThreads::BeginWork();
  MonitoredThreads::EndWork();
  EXPECT_NE(t->begin_ns.load(), 0u) << "the outer unit still runs";
  MonitoredThreads::EndWork();
  EXPECT_EQ(t->begin_ns.load(), 0u);
  MonitoredThreads::EndWork();  // unmatched
  EXPECT_EQ(t->unit.load(), unit);
  EXPECT_EQ(t->ended_unit.load(), unit);
}

TEST(MonitoredThreadsTest, WatchedUnitKeepsItsRunTimeAfterShortUnits) {
  MonitoredThreads::BeginWork();
  MonitoredThread* t = MonitoredThreads::CurrentIfClaimed();
  ASSERT_NE(t, nullptr);
  uint64_t unit = t->unit.load();
  MonitoredThreads::Watch(*t, unit);
  SleepMs(30);
  MonitoredThreads::EndWork();
  for (int i = 0; i < 5; ++i) {
    MonitoredThreads::BeginWork();
    MonitoredThreads::EndWork();
  }
  EXPECT_GE(MonitoredThreads::WatchedDuration(*t, unit), 30000000u);
  EXPECT_LT(t->last_duration_ns.load(), 30000000u) << "the last unit is a short one";
}

TEST(MonitoredThreadsTest, UnitEndedBeforeItWasWatchedFallsBackToTheLastUnit) {
  MonitoredThreads::BeginWork();
  MonitoredThread* t = MonitoredThreads::CurrentIfClaimed();
  ASSERT_NE(t, nullptr);
  uint64_t unit = t->unit.load();
  SleepMs(10);
  MonitoredThreads::EndWork();
  MonitoredThreads::Watch(*t, unit);
  EXPECT_GE(MonitoredThreads::WatchedDuration(*t, unit), 10000000u);
  MonitoredThreads::BeginWork();
  MonitoredThreads::EndWork();
  MonitoredThreads::Watch(*t, unit);
  EXPECT_EQ(MonitoredThreads::WatchedDuration(*t, unit), 0u) << "lost: not the last unit";
}

// The thread keeps its slot and tid in TLS (no system call per unit): a slot the watchdog
// released is no longer the thread's, and its next begin claims one again, with its own tid.
TEST(MonitoredThreadsTest, SlotReleasedByTheWatchdogIsClaimedAgain) {
  MonitoredThreads::BeginWork();
  MonitoredThreads::EndWork();
  MonitoredThread* t = MonitoredThreads::CurrentIfClaimed();
  ASSERT_NE(t, nullptr);
  MonitoredThreads::Release(*t);
  EXPECT_EQ(MonitoredThreads::CurrentIfClaimed(), nullptr);
  EXPECT_TRUE(MonitoredThreads::BeginWork()) << "claimed anew";
  MonitoredThreads::EndWork();
  ASSERT_NE(MonitoredThreads::CurrentIfClaimed(), nullptr);
  EXPECT_EQ(MonitoredThreads::CurrentIfClaimed()->tid.load(), gettid());
}

// A forked child's thread has another tid: after AfterForkChild (the recorder's atfork handler)
// it no longer takes the parent's slot for its own and claims one with its own tid.
TEST(MonitoredThreadsTest, ForkedChildClaimsASlotOfItsOwn) {
  MonitoredThreads::BeginWork();
  MonitoredThreads::EndWork();
  MonitoredThread* parent = MonitoredThreads::CurrentIfClaimed();
  ASSERT_NE(parent, nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MonitoredThreads::AfterForkChild();
    int status = 0;
    if (MonitoredThreads::CurrentIfClaimed() != nullptr) status |= 1;
    if (!MonitoredThreads::BeginWork()) status |= 2;
    MonitoredThread* own = MonitoredThreads::CurrentIfClaimed();
    if (own == nullptr || own == parent || own->tid.load() != gettid()) status |= 4;
    MonitoredThreads::EndWork();
    _exit(status);
  }
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: parent's slot taken, 2: no claim, 4: wrong slot";
}

// Threads that start at once (an event loop's workers) claim slots at the same moment. A thread
// that loses the race for a slot must not reset the slot the winner has claimed and begun a unit
// in (the watchdog would see that unit idle and never report its lag: RecorderLagTest's two
// lagging threads). Rounds of 8 threads released together by a barrier; after all have begun,
// each still finds its own unit running in its own slot.
TEST(MonitoredThreadsTest, ThreadsClaimingAtOnceKeepTheirRunningUnits) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  std::atomic<int> lost{0};
  for (int round = 0; round < kRounds && lost.load() == 0; ++round) {
    pthread_barrier_t begun, start;
    pthread_barrier_init(&start, nullptr, kThreads);
    pthread_barrier_init(&begun, nullptr, kThreads);
    std::vector<std::thread> threads;
    std::vector<MonitoredThread*> slots(kThreads, nullptr);
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        pthread_barrier_wait(&start);
        MonitoredThreads::BeginWork();
        pthread_barrier_wait(&begun);  // every claim of this round is done
        MonitoredThread* t = MonitoredThreads::CurrentIfClaimed();
        if (t == nullptr || t->begin_ns.load() == 0 || t->unit.load() == 0) ++lost;
        MonitoredThreads::EndWork();
        slots[i] = t;
      });
    }
    for (auto& thread : threads) thread.join();
    for (MonitoredThread* t : slots) {
      if (t != nullptr) MonitoredThreads::Release(*t);  // as the watchdog does for exited threads
    }
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&begun);
  }
  EXPECT_EQ(lost.load(), 0) << "a thread's running unit was reset by another thread's claim";
}

}  // namespace
}  // namespace heapgraph
