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

// One RunLeakScan or RunLeakCheck, the first of its process (as the at-exit check is), in
// scan_left_to_exit: the bytes it left mapped and the leaks it found.
struct LeftMapped {
  long long bytes = -1;
  size_t leaked = 0;
};
LeftMapped ScanLeftMapped(const std::string& mode) {
  char pattern[] = "/tmp/heapgraph-left-to-exit-XXXXXX";
  std::string root = mkdtemp(pattern), out;
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + " " + std::string(HEAPGRAPH_PROGRAM_DIR) +
                         "/scan_left_to_exit " + mode,
                     &out);
  std::filesystem::remove_all(root);
  LeftMapped left;
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(std::sscanf(out.c_str(), "ok=1 left=%lld leaked=%zu", &left.bytes, &left.leaked), 2)
      << out;
  return left;
}

// process_exits (the at-exit check), on a scan (ScanOptions) and on a check (LeakCheckOptions):
// the scan's preparation (the mappings' buffers, 34 MiB or more mapped by glibc for a first check,
// and the stop's helper stack) and the check's 16 MiB stack (check/FreshStack) stay mapped for
// the exit to unmap; without it they are unmapped (what both keep for later scans, such as the
// scan in place's copy and page pool, is the same). Both find the program's 2 leaks.
TEST(LeakScanTest, AScanOrCheckBeforeTheExitLeavesItsMappingsToTheExit) {
  const struct {
    const char* kind;
    long long at_least;
  } cases[] = {{"scan", 32ll << 20}, {"check", 48ll << 20}};
  for (const auto& c : cases) {
    LeftMapped unmaps = ScanLeftMapped(std::string(c.kind) + "-unmaps");
    LeftMapped exits = ScanLeftMapped(std::string(c.kind) + "-exits");
    EXPECT_GE(exits.bytes - unmaps.bytes, c.at_least)
        << c.kind << ": " << unmaps.bytes << " " << exits.bytes;
    EXPECT_EQ(unmaps.leaked, 2u) << c.kind;
    EXPECT_EQ(exits.leaked, 2u) << c.kind;
  }
}

}  // namespace
