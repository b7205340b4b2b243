// tests/scanner: scanner::RunLeakScan in a real child program (tests/programs/typing_dies, linked
// with libheapgraph.so): a snapshot child that dies while typing (a reader added through
// ScanOptions::add_readers faults on one block) keeps the leak check, with a notice and no types.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kTypingChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/typing_dies";

int Shell(const std::string& command, std::string* output) {
  return heapgraph::shell::RunShellCommand(command, output);
}

TEST(LeakScanTest, ASnapshotDyingWhileTypingCostsTheTypesNotTheCheck) {
  char pattern[] = "/tmp/heapgraph-typing-dies-XXXXXX";
  std::string root = mkdtemp(pattern), out;
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + " " + kTypingChild, &out);
  std::filesystem::remove_all(root);
  ASSERT_EQ(status, 0) << out;
  int ok = -1, typed = -1;
  size_t leaked = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "ok=%d leaked=%zu typed=%d", &ok, &leaked, &typed), 3) << out;
  EXPECT_EQ(ok, 1);
  EXPECT_GE(leaked, 3u) << out;  // the 3 blocks the program dropped
  EXPECT_EQ(typed, 0);
  EXPECT_NE(out.find("type analysis failed in the snapshot process (killed by signal 11)"),
            std::string::npos)
      << out;
}

}  // namespace
