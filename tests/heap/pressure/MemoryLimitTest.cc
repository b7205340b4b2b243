// tests/heap: MemoryLimit: the kernel formats it parses, this process's RSS, the percent against a
// configured limit, and — where the machine has them — the cgroup v2 memory files and PSI.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "heap/pressure/MemoryLimit.h"

namespace heapgraph {
namespace {

TEST(MemoryLimitTest, FindsTheCgroup2MountInMountinfo) {
  const char* mountinfo =
      "22 1 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
  char mount[256];
  EXPECT_TRUE(MemoryLimit::ParseCgroup2Mount(mountinfo, mount, sizeof(mount)));
  EXPECT_STREQ(mount, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(
      MemoryLimit::ParseCgroup2Mount("22 1 8:1 / / rw - ext4 /dev/vda rw\n", mount, sizeof(mount)));
}

TEST(MemoryLimitTest, ParsesMemoryEvents) {
  MemoryReading r;
  MemoryLimit::ParseEvents("low 0\nhigh 12\nmax 7\noom 3\noom_kill 2\noom_group_kill 0\n", &r);
  EXPECT_EQ(r.oom_events, 3u);
  EXPECT_EQ(r.oom_kills, 2u);
}

TEST(MemoryLimitTest, ReadsThisProcessRssAgainstAConfiguredLimit) {
  MemoryLimit limit;
  limit.Discover(uint64_t{1} << 40);
  EXPECT_TRUE(limit.HasLimit());
  EXPECT_NE(limit.sources() & MemoryLimit::kRss, 0u);
  std::vector<char> touched(64 << 20, 1);  // RSS of at least 64 MiB
  MemoryReading r = limit.Read();
  EXPECT_GE(r.rss, uint64_t{64} << 20);
  EXPECT_EQ(limit.Percent(r), 0u) << "64 MiB of 1 TiB";
  MemoryLimit tight;
  tight.Discover(r.rss / 2);
  EXPECT_GE(tight.Percent(tight.Read()), 150u);
  EXPECT_EQ(tight.EffectiveLimit(r), r.rss / 2);
  EXPECT_EQ(touched[12345], 1);
}

TEST(MemoryLimitTest, ReadsTheCgroupV2MemoryFilesWhereTheMachineHasThem) {
  MemoryLimit limit;
  limit.Discover(0);
  if ((limit.sources() & MemoryLimit::kCgroup) == 0) {
    GTEST_SKIP() << "this process is in no cgroup v2 with a memory controller (cgroup v1 or "
                    "hybrid hierarchy, or memory not enabled in cgroup.subtree_control)";
  }
  MemoryReading r = limit.Read();
  EXPECT_GT(r.cgroup_current, 0u) << limit.cgroup_dir();
  EXPECT_EQ(limit.HasLimit(), r.cgroup_max != 0);
}

TEST(MemoryLimitTest, ArmsAPsiTriggerWhereTheKernelHasPsi) {
  struct stat st;
  if (stat("/proc/pressure/memory", &st) != 0) {
    GTEST_SKIP() << "no /proc/pressure/memory (kernel without CONFIG_PSI, or psi=0)";
  }
  MemoryLimit limit;
  limit.Discover(uint64_t{1} << 30);
  EXPECT_EQ(limit.pressure_fd(), -1) << "Discover arms no trigger";
  EXPECT_EQ(limit.sources() & MemoryLimit::kPsi, 0u);
  if (!limit.ArmPressureTrigger()) {
    EXPECT_FALSE(limit.PressureTriggerPossible());
    GTEST_SKIP() << "PSI exists but a trigger cannot be written here (permissions)";
  }
  EXPECT_TRUE(limit.PressureTriggerPossible());
  EXPECT_GE(limit.pressure_fd(), 0);
  EXPECT_NE(limit.sources() & MemoryLimit::kPsi, 0u);
}

}  // namespace
}  // namespace heapgraph
