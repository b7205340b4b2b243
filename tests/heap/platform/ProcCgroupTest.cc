// tests/heap: ProcCgroup, the lines of /proc/<pid>/cgroup: the unified hierarchy's path, and the
// v1 hierarchy holding the memory controller (which then cannot be in the unified one: the memory
// watcher and the OOM counter look no further there).
#include <gtest/gtest.h>

#include "heap/platform/ProcCgroup.h"

namespace heapgraph {
namespace {

TEST(ProcCgroupTest, FindsTheUnifiedPath) {
  ProcCgroup c = ProcCgroup::Parse("0::/user.slice/app.scope\n");
  EXPECT_TRUE(c.has_unified);
  EXPECT_EQ(c.unified, "/user.slice/app.scope");
  EXPECT_FALSE(c.has_memory_v1);
  c = ProcCgroup::Parse("0::/");  // no newline at the end
  EXPECT_TRUE(c.has_unified);
  EXPECT_EQ(c.unified, "/");
}

TEST(ProcCgroupTest, FindsTheV1HierarchyHoldingMemory) {
  ProcCgroup c = ProcCgroup::Parse("4:memory:/v1\n0::/user.slice/app.scope\n");
  EXPECT_TRUE(c.has_memory_v1);
  EXPECT_EQ(c.memory_v1, "/v1");
  EXPECT_TRUE(c.has_unified);  // a hybrid machine: both are there
  EXPECT_EQ(c.unified, "/user.slice/app.scope");
  c = ProcCgroup::Parse("7:cpu,memory,blkio:/a/b\n2:blkio:/\n");
  EXPECT_TRUE(c.has_memory_v1);
  EXPECT_EQ(c.memory_v1, "/a/b");
  EXPECT_FALSE(c.has_unified);
  c = ProcCgroup::Parse("3:net_cls,memory:/x");
  EXPECT_EQ(c.memory_v1, "/x");
}

TEST(ProcCgroupTest, IgnoresOtherControllersAndMalformedLines) {
  ProcCgroup c = ProcCgroup::Parse("1:name=systemd:/\n3:memoryx:/\nno colon here\n5:pids\n");
  EXPECT_FALSE(c.has_memory_v1);
  EXPECT_FALSE(c.has_unified);
  c = ProcCgroup::Parse("");
  EXPECT_FALSE(c.has_memory_v1);
  EXPECT_FALSE(c.has_unified);
  c = ProcCgroup::Parse("10::/not-unified\n");  // only hierarchy 0 is the unified one
  EXPECT_FALSE(c.has_unified);
}

}  // namespace
}  // namespace heapgraph
