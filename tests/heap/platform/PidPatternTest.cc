#include <gtest/gtest.h>

#include <string>

#include "heap/platform/PidPattern.h"

namespace heapgraph {
namespace {

std::string Expand(const char* pattern, int pid, size_t size = 64) {
  char out[64];
  ExpandPidPattern(pattern, pid, out, size);
  return out;
}

TEST(PidPatternTest, ReplacesEveryPidAndUnescapesPercent) {
  EXPECT_EQ(Expand("/tmp/leaks-%p.json", 4242), "/tmp/leaks-4242.json");
  EXPECT_EQ(Expand("%p/%p", 7), "7/7");
  EXPECT_EQ(Expand("100%%-%p", 7), "100%-7");
}

TEST(PidPatternTest, LeavesOtherPercentsAndPlainPaths) {
  EXPECT_EQ(Expand("/tmp/report.json", 1), "/tmp/report.json");
  EXPECT_EQ(Expand("a%xb%", 1), "a%xb%");
  EXPECT_EQ(Expand("", 1), "");
}

TEST(PidPatternTest, CutsToTheBufferAndStaysTerminated) {
  EXPECT_EQ(Expand("abcdef", 1, 4), "abc");
  EXPECT_EQ(Expand("ab%p", 123456, 6), "ab123");
}

}  // namespace
}  // namespace heapgraph
