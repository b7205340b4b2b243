// tests/heap: ProcessStartTicks: field 22 of /proc/<pid>/stat, for this process, another one and
// none, and the parsing of awkward command names.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "heap/platform/ProcessStartTicks.h"

namespace heapgraph {
namespace {

// Field 22 (starttime) of /proc/<pid>/stat, parsed here independently of the class.
uint64_t StartTicksFromProc(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // fields 3, 4, ...
  std::string field;
  for (int number = 3; number <= 22; ++number) fields >> field;
  return std::stoull(field);
}

TEST(ProcessStartTicksTest, SelfMatchesField22OfProcSelfStat) {
  EXPECT_EQ(StartTicksFromProc("self"), ProcessStartTicks::OfSelf());
  EXPECT_NE(0u, ProcessStartTicks::OfSelf());
  EXPECT_EQ(ProcessStartTicks::OfSelf(), ProcessStartTicks::Of(getpid()));
}

// OfSelf reads the file once per process: a forked child, started ticks later than the parent
// that read its own already, gets its own start, not the parent's.
TEST(ProcessStartTicksTest, AForkedChildsSelfIsItsOwnStart) {
  const uint64_t parent = ProcessStartTicks::OfSelf();
  ASSERT_NE(0u, parent);
  usleep(30000);  // three ticks at USER_HZ 100: the child's start differs from ours
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const uint64_t own = StartTicksFromProc("self");
    _exit(ProcessStartTicks::OfSelf() == own && own != parent ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(parent, ProcessStartTicks::OfSelf());
}

TEST(ProcessStartTicksTest, AnotherRunningProcess) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  uint64_t ticks = ProcessStartTicks::Of(child);
  EXPECT_EQ(StartTicksFromProc(std::to_string(child)), ticks);
  EXPECT_GE(ticks, ProcessStartTicks::OfSelf());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(0u, ProcessStartTicks::Of(child)) << "reaped";
}

TEST(ProcessStartTicksTest, NoProcessIsZero) {
  EXPECT_EQ(0u, ProcessStartTicks::Of(0));
  EXPECT_EQ(0u, ProcessStartTicks::Of(-1));
  EXPECT_EQ(0u, ProcessStartTicks::Of(0x7fffffff));
}

TEST(ProcessStartTicksTest, CommandNamesWithSpacesAndParentheses) {
  const std::string after = " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21\n";
  EXPECT_EQ(987654u, ProcessStartTicks::Parse(("12 (plain)" + after).c_str()));
  EXPECT_EQ(987654u, ProcessStartTicks::Parse(("12 (a b) c)" + after).c_str()));
  EXPECT_EQ(987654u, ProcessStartTicks::Parse(("12 ()" + after).c_str()));
}

TEST(ProcessStartTicksTest, TextWithoutTheFieldIsZero) {
  EXPECT_EQ(0u, ProcessStartTicks::Parse(""));
  EXPECT_EQ(0u, ProcessStartTicks::Parse("12 no parenthesis S 1 2 3"));
  EXPECT_EQ(0u, ProcessStartTicks::Parse("12 (short) S 1 2 3"));
}

}  // namespace
}  // namespace heapgraph
