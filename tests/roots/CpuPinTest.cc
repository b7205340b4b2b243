#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roots/CpuPin.h"
#include "roots/ThreadCapture.h"

namespace heapgraph::roots {
namespace {

cpu_set_t Affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return set;
}

TEST(CpuPinTest, PinConfinesTheThreadToItsCpuAndUnpinGivesItsSetBack) {
  const cpu_set_t before = Affinity();
  CpuPin pin;
  ASSERT_TRUE(pin.Pin());
  EXPECT_TRUE(pin.pinned());
  const cpu_set_t pinned = Affinity();
  EXPECT_EQ(CPU_COUNT(&pinned), 1);
  EXPECT_TRUE(CPU_ISSET(sched_getcpu(), &pinned));
  pin.Unpin();
  EXPECT_FALSE(pin.pinned());
  const cpu_set_t after = Affinity();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  pin.Unpin();  // a second Unpin changes nothing
  const cpu_set_t again = Affinity();
  EXPECT_TRUE(CPU_EQUAL(&before, &again));
}

// A task cloned while the thread is pinned inherits the one-CPU set; RestoreIn gives it the set
// the thread had (a snapshot process's marking must not be confined).
TEST(CpuPinTest, RestoreInGivesAClonedTaskTheSetFromBeforeThePin) {
  const cpu_set_t before = Affinity();
  CpuPin pin;
  ASSERT_TRUE(pin.Pin());
  const pid_t child = fork();
  if (child == 0) {
    cpu_set_t inherited;
    sched_getaffinity(0, sizeof(inherited), &inherited);
    if (CPU_COUNT(&inherited) != 1) _exit(2);
    pin.RestoreIn();
    cpu_set_t restored;
    sched_getaffinity(0, sizeof(restored), &restored);
    _exit(CPU_EQUAL(&restored, &before) ? 0 : 3);
  }
  pin.Unpin();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A stop of a process whose only thread is the caller pins the caller for the hand-off to the
// helper; once the world is released the caller has its own set again.
TEST(CpuPinTest, AStopOfTheCallerAloneLeavesItsCpuSetAsItWas) {
  const cpu_set_t before = Affinity();
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  capture.ReleaseAll();
  const cpu_set_t after = Affinity();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
}  // namespace heapgraph::roots
