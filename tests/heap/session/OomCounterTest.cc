// OomCounter: parsing memory.events / memory.oom_control text, and this process's counter file.
#include <gtest/gtest.h>

#include <cstring>

#include "heap/session/OomCounter.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {
namespace {

bool Parse(const char* text, const char* key, uint64_t* out) {
  return OomCounter::ParseKey(text, strlen(text), key, out);
}

TEST(OomCounterTest, ParsesTheKeyAtALineStartOnly) {
  uint64_t v = 0;
  ASSERT_TRUE(Parse("low 0\nhigh 0\nmax 3\noom 2\noom_kill 17\n", "oom_kill", &v));
  EXPECT_EQ(v, 17u);
  ASSERT_TRUE(Parse("oom_kill_disable 0\nunder_oom 0\noom_kill 5", "oom_kill", &v));
  EXPECT_EQ(v, 5u);
  ASSERT_TRUE(Parse("oom 2\noom_kill 1\n", "oom", &v));
  EXPECT_EQ(v, 2u);
  EXPECT_FALSE(Parse("xoom_kill 4\n", "oom_kill", &v));
  EXPECT_FALSE(Parse("oom_kill x\n", "oom_kill", &v));
  EXPECT_FALSE(Parse("", "oom_kill", &v));
}

TEST(OomCounterTest, UnreadablePathIsUnknown) {
  EXPECT_EQ(OomCounter::Read(""), format::kUnknownCounter);
  EXPECT_EQ(OomCounter::Read("/nonexistent/memory.events"), format::kUnknownCounter);
  EXPECT_EQ(OomCounter::Read("/dev/zero"), format::kUnknownCounter);  // not a regular file
}

// Where this machine has a memory cgroup, its counter reads as a number.
TEST(OomCounterTest, FindsThisProcessCounterWhenThereIsOne) {
  char path[format::kCounterPath];
  if (!OomCounter::FindPath(0, path, sizeof(path))) GTEST_SKIP() << "no memory cgroup";
  EXPECT_NE(OomCounter::Read(path), format::kUnknownCounter) << path;
}

}  // namespace
}  // namespace heapgraph
