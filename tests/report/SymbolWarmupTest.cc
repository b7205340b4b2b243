// tests/report: SymbolWarmup and the scan's while_marking hook in a real child program
// (tests/programs/leak_warmup_child, linked with libheapgraph.so), and RunLeakCheck there: the
// leak records (frames, files, lines, modules) resolved through a Symbolizer warmed with every
// recorded return address are identical to those of a fresh one and the warm report computes no
// symbol itself; a hook that waits for the marking, or throws, leaves the scan's result as it was;
// the check's two files are the report's JSON and text.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/leak_warmup_child";

int Shell(const std::string& command, std::string* output) {
  return heapgraph::shell::RunShellCommand(command, output);
}

TEST(SymbolWarmupTest, WarmedReportsEqualColdOnesInARealProgram) {
  char pattern[] = "/tmp/heapgraph-warmup-XXXXXX";
  std::string root = mkdtemp(pattern), out;
  std::filesystem::create_directory(root + "/rec");
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + "/rec " + kChild + " " + root, &out);
  std::filesystem::remove_all(root);
  ASSERT_EQ(status, 0) << out;
  size_t records = 0, warmed = 0, cold_computed = 0, warm_computed = 0;
  int complete = -1, same_warm = -1, same_wait = -1, same_check = -1, files = -1, hook = -1,
      polled = -1, same_thrown = -1;
  ASSERT_EQ(std::sscanf(out.c_str(),
                        "records %zu warmed %zu complete %d same_warm %d same_wait %d "
                        "same_check %d files %d hook %d polled %d cold_computed %zu warm_computed "
                        "%zu same_thrown %d",
                        &records, &warmed, &complete, &same_warm, &same_wait, &same_check, &files,
                        &hook, &polled, &cold_computed, &warm_computed, &same_thrown),
            12)
      << out;
  EXPECT_GE(records, 4u) << out;  // malloc x2, strdup, new[]: four stacks at least
  EXPECT_GT(warmed, 0u);
  EXPECT_EQ(complete, 1);
  EXPECT_EQ(same_warm, 1) << out;
  EXPECT_EQ(same_wait, 1) << out;
  EXPECT_EQ(same_check, 1) << out;
  EXPECT_EQ(files, 1) << out;
  EXPECT_EQ(hook, 3);                // once per scan that set it
  EXPECT_EQ(same_thrown, 1) << out;  // a hook that throws costs the scan nothing
  EXPECT_EQ(polled, 1);              // marking_done() turned true
  EXPECT_GT(cold_computed, 0u);
  EXPECT_EQ(warm_computed, 0u) << out;  // every symbol the warm report needed was ready
}

}  // namespace
