// tests/check: leak checks that overlap in one process, or run in a child forked during a check,
// on a real program (tests/programs/overlapping_checks): each reports exactly the planted leaks
// (issue 12, item 8). Short versions; `overlapping_checks overlap 80` and `fork 100` are the long
// ones (the stress target).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kOverlapProgram = std::string(HEAPGRAPH_PROGRAM_DIR) + "/overlapping_checks";
constexpr int kLeaks = 2000;

class LeakCheckOverlapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/heapgraph-overlap-XXXXXX";
    root_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Runs the program in `mode`; returns its stdout (exit status 0 asserted by the caller).
  int Run(const std::string& mode, int count, std::string* out) {
    return heapgraph::shell::RunShellCommand(
        "HEAPGRAPH_OPTIONS=dir=" + root_ + " " + kOverlapProgram + " " + mode + " " +
            std::to_string(count) + " " + std::to_string(kLeaks),
        out);
  }

  std::string root_;
};

// The checks' freed working memory stays in that thread's malloc arena: never a root.
TEST_F(LeakCheckOverlapTest, ChecksFromAThreadWithItsOwnArenaAreExact) {
  std::string out;
  ASSERT_EQ(Run("thread", 3, &out), 0) << out;
  EXPECT_EQ(out, "exact 3 of 3\n");
}

// API checks on the main thread while signal checks run on the watcher thread: one at a time,
// and neither finds the other's memory. The signal checks find main inside its check call
// (waiting for the check lock, or still releasing it): its frames below heapgraph_check_leaks'
// caller are cut (before: 1998 of 2000 every run, two stale words in those frames' unwritten
// slots; then in 4-7 of 10 runs on a loaded machine, main caught in the release, unlisted).
TEST_F(LeakCheckOverlapTest, ApiChecksDuringSignalChecksAreAllExact) {
  std::string out;
  ASSERT_EQ(Run("overlap", 4, &out), 0) << out;
  int exact = -1, total = -1, signals = -1;
  char dir[1024] = {};
  ASSERT_EQ(
      std::sscanf(out.c_str(), "exact %d of %d\nsignals %d %1023s", &exact, &total, &signals, dir),
      4)
      << out;
  EXPECT_EQ(exact, total) << out;
  ASSERT_GE(signals, 1) << out;
  for (int n = 1; n <= signals; ++n) {
    std::ifstream file(std::string(dir) + "/leaks-" + std::to_string(n) + ".json");
    ASSERT_TRUE(file) << "report " << n;
    nlohmann::json json = nlohmann::json::parse(file);
    EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), kLeaks) << "signal check " << n;
  }
}

// A child forked while its parent checks inherits none of that check's memory in use; the fork
// waits its turn behind a thread that checks in a loop (before: a plain mutex starved it).
TEST_F(LeakCheckOverlapTest, ChildrenForkedDuringChecksAreExact) {
  std::string out;
  ASSERT_EQ(Run("fork", 4, &out), 0) << out;
  EXPECT_EQ(out, "exact 4 of 4\n");
}

}  // namespace
