// tests/check: checks while other threads churn the heap report exactly the leaks planted before
// each, on a real program (tests/programs/stress_checks churn, the stress scenario's first part,
// shortened). Each check's newest leak is the block glibc's main arena last carved out; its stale
// last_remainder pointed inside such a block in 5-7 % of these checks while main_arena was a root
// (scanner/MallocHeaps), so 150 checks in a row missed one with near certainty.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kProgram = std::string(HEAPGRAPH_PROGRAM_DIR) + "/stress_checks";

TEST(LeakCheckUnderChurnTest, EveryCheckReportsExactlyThePlantedLeaks) {
  char pattern[] = "/tmp/heapgraph-churn-XXXXXX";
  const std::string root = mkdtemp(pattern);
  constexpr int kChecks = 150;
  std::string out;
  const int status = heapgraph::shell::RunShellCommand(
      "HEAPGRAPH_OPTIONS=dir=" + root + " " + kProgram + " churn " + std::to_string(kChecks), &out);
  std::filesystem::remove_all(root);
  ASSERT_EQ(status, 0) << out;
  int ok = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("try ", 0) != 0) continue;
    EXPECT_NE(line.find(" ok"), std::string::npos) << line;
    ok += line.find(" ok") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(ok, kChecks);
}

}  // namespace
