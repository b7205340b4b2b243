// gtest/: the GoogleTest event listener of heapgraph::gtest (include/heapgraph/gtest.h): a
// checkpoint named after the test in OnTestStart, a delta check since it in OnTestEnd (after
// TearDown and the fixture's destructor), and a test failure naming the leaked blocks. Appended
// after the printers (googletest's sample10), so the failure is the test's and printed with it.
// Skipped tests, tests named by HEAPGRAPH_GTEST_SKIP or HEAPGRAPH_NO_LEAK_CHECK(), and in run-twice
// mode every test of the first pass, are not checked.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gtest/LeakCheckApi.h"

namespace heapgraph::gtest {

class LeakCheckListener : public testing::EmptyTestEventListener {
 public:
  // `report_dir`: where <Suite>.<Test>.{json,txt} go; `skip`: ':'-separated suite or test names;
  // `first_checked_iteration`: 1 in run-twice mode.
  LeakCheckListener(const LeakCheckApi& api, std::string report_dir, const std::string& skip,
                    int first_checked_iteration);

  void OnTestIterationStart(const testing::UnitTest& unit, int iteration) override;
  void OnTestStart(const testing::TestInfo& test) override;
  void OnTestEnd(const testing::TestInfo& test) override;

  // The current test's opt-out and tolerance (the macros).
  static void SkipCurrent();
  static void ExpectCurrent(unsigned long long blocks);

 private:
  bool Checked(const testing::TestInfo& test) const;
  // The check of a finished test, and the failure when it leaked. Never inlined: OnTestEnd scrubs
  // the stack below itself first.
  __attribute__((noinline)) void CheckTest();
  // Fails the current test with the leaked count and the text report's first lines.
  void Fail(const std::string& name, int leaked, const std::string& text_path) const;

  const LeakCheckApi& api_;
  std::string report_dir_;
  std::set<std::string> skip_;
  int first_checked_iteration_;
  bool checking_iteration_ = true;
  bool verbose_ = false;
  // The current test's name and report paths, made in OnTestStart before the checkpoint.
  std::string name_, json_path_,
      text_path_;  // HEAPGRAPH_GTEST_VERBOSE=1: one line per check on stderr
};

}  // namespace heapgraph::gtest
