// tests/check: the longest time an allocating thread waited for a recorder lock during a check
// (heap/store/LockWait, scanner/LeakScan), on a real program whose threads allocate without pause
// while the main thread checks (tests/programs/alloc_during_checks): every check's report has it,
// it is not negative, and it lies inside the check (the waits are clipped to the check's window,
// which opens after the check's clock started), and the C summary carries the same figure. No
// wall-clock bound: the machine may be loaded.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kAllocWaitProgram = std::string(HEAPGRAPH_PROGRAM_DIR) + "/alloc_during_checks";

class LeakCheckAllocationWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/heapgraph-allocwait-XXXXXX";
    root_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string root_;
};

TEST_F(LeakCheckAllocationWaitTest, EveryCheckReportsTheLongestWaitInsideTheCheck) {
  constexpr int kChecks = 4;
  std::string out;
  ASSERT_EQ(
      heapgraph::shell::RunShellCommand("HEAPGRAPH_OPTIONS=dir=" + root_ + " " + kAllocWaitProgram +
                                            " 3 " + std::to_string(kChecks) + " " + root_,
                                        &out),
      0)
      << out;
  int ok = -1, total = -1;
  unsigned long allocations = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "checks %d of %d, %lu", &ok, &total, &allocations), 3) << out;
  EXPECT_EQ(ok, kChecks) << out;
  double longest = 0;
  for (int i = 0; i < kChecks; ++i) {
    std::ifstream file(root_ + "/check-" + std::to_string(i) + ".json");
    ASSERT_TRUE(file) << "report " << i;
    nlohmann::json scan = nlohmann::json::parse(file)["scan"];
    ASSERT_TRUE(scan["ok"].get<bool>()) << scan.dump();
    ASSERT_TRUE(scan.contains("longest_allocation_wait_ms")) << scan.dump();
    double wait = scan["longest_allocation_wait_ms"].get<double>();
    EXPECT_GE(wait, 0) << "check " << i;
    EXPECT_LE(wait, scan["total_ms"].get<double>()) << "check " << i;
    std::string line = "wait " + std::to_string(i) + " ";
    size_t at = out.find(line);
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_DOUBLE_EQ(std::strtod(out.c_str() + at + line.size(), nullptr), wait)
        << "the C summary's longest_allocation_wait_ms, check " << i;
    longest = std::max(longest, wait);
  }
  std::printf("longest allocation wait of %d checks: %.2f ms (%lu allocations during them)\n",
              kChecks, longest, allocations);
}

}  // namespace
