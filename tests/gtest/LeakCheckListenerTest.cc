// tests/gtest: gtest/LeakCheckListener on tests/programs/gtest_leaks, a suite with one leaking
// test among clean ones, a leak in TearDown, a first-use cache, an opt-out, a tolerated leak and
// a skipped suite; linked with libheapgraph.so and under LD_PRELOAD.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

struct SuiteRun {
  std::set<std::string> failed;  // "[  FAILED  ] Suite.Test" lines of the summary
  std::set<std::string> reports;
  std::string output;
};

SuiteRun RunSuite(const std::string& program, bool preload, const std::string& extra_env = "") {
  TempRoot root;
  const std::string reports = root.path() + "/reports";
  std::vector<std::string> env = RecordingEnv(root.path(), "", preload);
  env.push_back("HEAPGRAPH_GTEST_DIR=" + reports);
  env.push_back("HEAPGRAPH_GTEST_SKIP=SkippedSuite");
  if (!extra_env.empty()) env.push_back(extra_env);
  RunResult result = RunToExit(ProgramPath(program), {}, env, std::chrono::milliseconds(120000));
  SuiteRun run;
  for (const std::string& line : result.lines) {
    run.output += line + "\n";
    const std::string prefix = "[  FAILED  ] ";
    if (line.rfind(prefix, 0) == 0 && line.find(' ', prefix.size()) == std::string::npos) {
      run.failed.insert(line.substr(prefix.size()));
    }
  }
  run.output += result.stderr_text;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(reports, error)) {
    run.reports.insert(entry.path().filename().string());
  }
  return run;
}

void ExpectLeakyTestsFail(const SuiteRun& run, bool cache_fails) {
  std::set<std::string> expected = {"Leaky.ForgetsABlock", "FixtureLeak.InTearDown"};
  if (cache_fails) expected.insert("Cache.FirstUse");
  std::set<std::string> failed = run.failed;
  if (!cache_fails) {
    EXPECT_EQ(failed.count("Cache.FirstUse"), 0u) << run.output;
  }
  failed.erase("Cache.FirstUse");  // a conservative scan may miss a first-use leak: not asserted
  expected.erase("Cache.FirstUse");
  EXPECT_EQ(failed, expected) << run.output;
  EXPECT_NE(run.output.find("heapgraph: Leaky.ForgetsABlock leaked 1 block(s)"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("LeakOneBlock"), std::string::npos) << run.output;
  EXPECT_EQ(run.reports.count("Leaky.ForgetsABlock.json"), 1u);
  EXPECT_EQ(run.reports.count("Leaky.ForgetsABlock.txt"), 1u);
  EXPECT_EQ(run.reports.count("FixtureLeak.InTearDown.json"), 1u);
  EXPECT_EQ(run.reports.count("Clean.Vector.json"), 0u);  // no file when nothing leaked
}

TEST(LeakCheckListenerTest, LinkedFailsExactlyTheLeakingTests) {
  SuiteRun run = RunSuite("gtest_leaks_linked", /*preload=*/false);
  ExpectLeakyTestsFail(run, /*cache_fails=*/true);
  EXPECT_EQ(run.failed.count("BadInput.UnknownCheckpoint"), 0u);
  EXPECT_NE(run.output.find("heapgraph: checkpoint \"never-set\" was never set"), std::string::npos)
      << run.output;
}

TEST(LeakCheckListenerTest, PreloadFailsExactlyTheLeakingTests) {
  ExpectLeakyTestsFail(RunSuite("gtest_leaks_preload", /*preload=*/true), /*cache_fails=*/true);
}

TEST(LeakCheckListenerTest, RunTwiceAcceptsTheFirstUseCache) {
  SuiteRun run = RunSuite("gtest_leaks_preload", /*preload=*/true, "HEAPGRAPH_GTEST_RUN_TWICE=1");
  ExpectLeakyTestsFail(run, /*cache_fails=*/false);
}

}  // namespace
}  // namespace heapgraph::proctest
