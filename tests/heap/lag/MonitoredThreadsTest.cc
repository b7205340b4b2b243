// heap/lag/MonitoredThreads on the test's own thread: units counted, nested pairs one unit, an
// unmatched end ignored, and the watched unit's whole run time kept even when many short units
// follow it before the watchdog's next check (the end record's duration in a real event loop).
#include <gtest/gtest.h>
#include <time.h>

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

}  // namespace
}  // namespace heapgraph
