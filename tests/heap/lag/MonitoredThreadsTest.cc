// heap/lag/MonitoredThreads on the test's own thread: units counted, nested pairs one unit, an
// unmatched end ignored, and the watched unit's whole run time kept even when many short units
// follow it before the watchdog's next check (the end record's duration in a real event loop); a
// released slot and a forked child's thread claim anew.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

}  // namespace
}  // namespace heapgraph
