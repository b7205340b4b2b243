// tests/check: LeakSanitizer compatibility (issue 13, items 3-4) on a real LSan-annotated program,
// tests/programs/lsan_api (compiled against compiler-rt's lsan_interface.h where the system has
// it, linked with libheapgraph.so): ignored objects and what they point to, allocations under
// __lsan_disable / ScopedDisabler, root regions before and after unregistering, the recoverable
// and the once-only check, __lsan_is_turned_off, __lsan_default_options and
// __lsan_default_suppressions, LSAN_OPTIONS (exitcode, an unsupported flag named once,
// HEAPGRAPH_OPTIONS winning), and a suppressions file under `heapgraph run` (JSON marks the
// suppressed leak with its rule, the text lists "Suppressions used") and the generator.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/FileText.h"
#include "tests/ShellCommand.h"
#include "tests/TempDir.h"

namespace {

using heapgraph::ReadFile;

const std::string kLsanProgram = std::string(HEAPGRAPH_PROGRAM_DIR) + "/lsan_api";

struct Outcome {
  int status = -1;
  std::string out, err, text;
  nlohmann::json json;

  // Sizes of the leak records (each block's size: every record here has one block) that are not
  // suppressed, sorted.
  std::vector<int> Leaked() const {
    std::vector<int> sizes;
    if (!json.is_object()) return sizes;
    for (const auto& r : json["leaks"]) {
      if (r["suppressed"].is_null()) {
        for (int i = 0; i < r["count"].get<int>(); ++i) {
          sizes.push_back(r["size"].get<int>() / r["count"].get<int>());
        }
      }
    }
    std::sort(sizes.begin(), sizes.end());
    return sizes;
  }
};

// The program run directly (linked with libheapgraph.so), `prefix` before it (environment
// variables), `options` appended to HEAPGRAPH_OPTIONS (",key=value..."); its checks write
// report.json and report.txt.
Outcome RunWithEnvironment(const std::string& prefix, const std::string& options,
                           const std::string& mode) {
  heapgraph::TempDir dir;
  Outcome r;
  std::string json = dir.Path("report.json"), text = dir.Path("report.txt");
  r.status = heapgraph::shell::RunShellCommand(
      prefix + " HEAPGRAPH_OPTIONS='dir=" + dir.path() + ",leak_json=" + json + ",leak_text=" +
          text + options + "' " + kLsanProgram + " " + mode + " 2>" + dir.Path("stderr"),
      &r.out);
  r.err = ReadFile(dir.Path("stderr"));
  r.text = ReadFile(text);
  r.json = nlohmann::json::parse(ReadFile(json), nullptr, false);
  return r;
}

// The same with HEAPGRAPH_OPTIONS entries `options` ("key=value,...", or "") only.
Outcome RunDirect(const std::string& options, const std::string& mode) {
  return RunWithEnvironment("", options.empty() ? "" : "," + options, mode);
}

TEST(LsanCompatibilityTest, IgnoredObjectAndWhatItPointsToAreNotReported) {
  Outcome r = RunDirect("", "ignore");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "recoverable=1\n") << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{48}) << r.text;  // not 64, not its child 32
}

TEST(LsanCompatibilityTest, AllocationsUnderDisableAreNotReported) {
  Outcome r = RunDirect("", "disable");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "recoverable=1\n") << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{48}) << r.text;  // not 80, 81, 80
}

TEST(LsanCompatibilityTest, RootRegionKeepsItsBlockUntilUnregistered) {
  Outcome r = RunDirect("", "region");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "registered=0 unregistered=1\n") << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{96}) << r.text;  // the last check's report
}

TEST(LsanCompatibilityTest, DoLeakCheckExitsWithTheExitCodeOnce) {
  Outcome r = RunDirect("exitcode=57", "once");
  EXPECT_EQ(r.status, 57) << r.err;
  EXPECT_EQ(r.out, "") << r.err;  // never returned
  EXPECT_EQ(r.Leaked(), std::vector<int>{48}) << r.text;
}

// The repeated checks keep their copy of the live blocks (their addresses) from one check to the
// next: a later check with a snapshot process never takes that memory for a root.
TEST(LsanCompatibilityTest, ARepeatedChecksKeptCopyHidesNoLeakFromALaterCheck) {
  Outcome r = RunDirect("exitcode=57", "kept");
  EXPECT_EQ(r.status, 57) << r.err;
  EXPECT_EQ(r.out, "held=0\n") << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{144}) << r.text;
}

// exitcode=0: LeakSanitizer terminates only for a nonzero exit code; the program goes on, and
// the second call checks nothing.
TEST(LsanCompatibilityTest, DoLeakCheckWithExitcodeZeroReturns) {
  Outcome r = RunDirect("exitcode=0", "once");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "survived\n") << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{48}) << r.text;
}

// Under `heapgraph run` (exitcode=0 in the process) __lsan_do_leak_check returns and replaces the
// at-exit check; its verdict still fails the run.
TEST(LsanCompatibilityTest, DoLeakCheckUnderHeapgraphRunFailsTheRun) {
  heapgraph::TempDir dir;
  std::string out;
  int status = heapgraph::shell::RunShellCommand(
      "TMPDIR=" + dir.path() + " " + std::string(HEAPGRAPH_CLI) + " run --text /dev/null -- " +
          kLsanProgram + " once 2>&1",
      &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_NE(out.find("survived"), std::string::npos) << out;
  EXPECT_NE(out.find("1 of 1 recorded process checked, 1 with leaks"), std::string::npos) << out;
}

TEST(LsanCompatibilityTest, IsTurnedOffSkipsTheChecks) {
  Outcome r = RunWithEnvironment("LSAN_TEST_OFF=1", ",exitcode=57", "once");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "survived\n") << r.err;
  EXPECT_TRUE(r.text.empty()) << r.text;
}

TEST(LsanCompatibilityTest, DefaultOptionsHookIsHonoured) {
  Outcome r = RunWithEnvironment("LSAN_TEST_DEFAULT_OPTIONS=exitcode=42", "", "once");
  EXPECT_EQ(r.status, 42) << r.err;
}

TEST(LsanCompatibilityTest, LsanOptionsExitcodeAndUnsupportedFlagNamedOnce) {
  Outcome r = RunWithEnvironment(
      "LSAN_OPTIONS='exitcode=43:fast_unwind_on_malloc=0 fast_unwind_on_malloc=1,verbosity=1'", "",
      "once");
  EXPECT_EQ(r.status, 43) << r.err;
  const std::string flag = "LSAN_OPTIONS flag 'fast_unwind_on_malloc' is not supported";
  size_t first = r.err.find(flag);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(flag, first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("LSAN_OPTIONS flag 'verbosity' is not supported"), std::string::npos)
      << r.err;
}

TEST(LsanCompatibilityTest, HeapgraphOptionsWinOverLsanOptions) {
  Outcome r = RunWithEnvironment("LSAN_OPTIONS=exitcode=43 LSAN_TEST_DEFAULT_OPTIONS=exitcode=42",
                                 ",exitcode=44", "once");
  EXPECT_EQ(r.status, 44) << r.err;
}

TEST(LsanCompatibilityTest, DetectLeaksZeroChecksNothing) {
  Outcome r = RunWithEnvironment("LSAN_OPTIONS=detect_leaks=0", ",exitcode=57", "once");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "survived\n") << r.err;
}

TEST(LsanCompatibilityTest, DefaultSuppressionsHookIsHonoured) {
  Outcome r =
      RunWithEnvironment("LSAN_TEST_DEFAULT_SUPPRESSIONS=leak:leak_one", ",leak_check=1", "two");
  EXPECT_EQ(r.status, 23) << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{222}) << r.text;
}

// `heapgraph run --suppressions`: one of two leaks suppressed; the JSON keeps it, marked with the
// rule; the text lists it under "Suppressions used"; the generator writes a rule for the other.
TEST(LsanCompatibilityTest, SuppressionsFileUnderHeapgraphRun) {
  heapgraph::TempDir dir;
  std::ofstream(dir.Path("a.supp")) << "# leak_two is known\nleak:^leak_two\n";
  std::string json = dir.Path("r.json"), text = dir.Path("r.txt"), out;
  int status = heapgraph::shell::RunShellCommand(
      "TMPDIR=" + dir.path() + " " + std::string(HEAPGRAPH_CLI) + " run --suppressions " +
          dir.Path("a.supp") + " --json " + json + " --text " + text + " -- " + kLsanProgram +
          " two 2>/dev/null",
      &out);
  std::string report_text = ReadFile(text);
  EXPECT_EQ(status, 23) << report_text;
  nlohmann::json report = nlohmann::json::parse(ReadFile(json), nullptr, false);
  ASSERT_TRUE(report.is_object());
  int suppressed = 0;
  for (const auto& r : report["leaks"]) {
    if (r["size"] == 222) {
      EXPECT_EQ(r["suppressed"], "^leak_two") << r.dump();
      ++suppressed;
    } else {
      EXPECT_TRUE(r["suppressed"].is_null()) << r.dump();
    }
  }
  EXPECT_EQ(suppressed, 1) << report.dump();
  EXPECT_EQ(report["summary"]["direct_blocks"], 1);
  EXPECT_EQ(report["summary"]["suppressed_blocks"], 1);
  EXPECT_EQ(report["summary"]["suppressed_bytes"], 222);
  ASSERT_EQ(report["suppressions_used"].size(), 1u);
  EXPECT_EQ(report["suppressions_used"][0]["rule"], "^leak_two");
  EXPECT_NE(report_text.find("Suppressions used:\n  count      bytes template\n      1        222 "
                             "^leak_two\n"),
            std::string::npos)
      << report_text;
  EXPECT_EQ(report_text.find("222 byte(s)"), std::string::npos) << report_text;

  std::string rules;
  EXPECT_EQ(heapgraph::shell::RunShellCommand(std::string(HEAPGRAPH_CLI) + " suppressions " + json,
                                              &rules),
            0);
  EXPECT_NE(rules.find("\nleak:leak_one()\n"), std::string::npos) << rules;
  EXPECT_EQ(rules.find("leak_two"), std::string::npos) << rules;
}

// A suppressions file that cannot be read, or holds garbage, is one line each; the check runs.
TEST(LsanCompatibilityTest, BadSuppressionsFileIsOneLineAndTheCheckRuns) {
  heapgraph::TempDir dir;
  std::string garbage(5000, 'x');
  garbage += "\n\x01\x02\xff:\nleak:leak_one\n";
  std::ofstream(dir.Path("bad.supp"), std::ios::binary) << garbage;
  Outcome r = RunWithEnvironment(
      "", ",leak_check=1,suppressions=" + dir.Path("missing.supp") + ";" + dir.Path("bad.supp"),
      "two");
  EXPECT_EQ(r.status, 23) << r.err;
  EXPECT_EQ(r.Leaked(), std::vector<int>{222}) << r.text;
  EXPECT_NE(r.err.find("missing.supp: no such file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad.supp:1: line longer than 4096 bytes"), std::string::npos) << r.err;
}

}  // namespace
