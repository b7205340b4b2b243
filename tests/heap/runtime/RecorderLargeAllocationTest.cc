// The large-allocation monitor with large_threshold=1M: a child allocating 2 MiB and 512 KiB
// (tests/programs/hg_large_alloc.cc) gets exactly one record for the 2 MiB block, with frame
// lines "module+0x... (build-id ...)" that name the executable; a program linked with
// libheapgraph (hg_large_callback.cc) gets exactly one callback.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

constexpr char kRecordPrefix[] = "heapgraph: large allocation of ";
constexpr char kExpectedRecord[] = "heapgraph: large allocation of 2097152 bytes by malloc at ";

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::vector<std::string> FileLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// Exactly one record, for the 2 MiB block, followed only by frame lines; one of them is
// "#0 <address in AllocateLarge> hg_large_alloc+0x... (build-id <the executable's>)".
void ExpectOneRecord(const std::vector<std::string>& log, const RunResult& run) {
  ASSERT_FALSE(log.empty()) << "nothing was logged";
  EXPECT_TRUE(StartsWith(log[0], kExpectedRecord)) << log[0];
  EXPECT_NE(log[0].find(FieldOf(run.lines, "large").at(0)), std::string::npos)
      << "the record does not give the block's address: " << log[0];
  std::string build_id = BuildIdHex(ProgramPath("hg_large_alloc"));
  ASSERT_FALSE(build_id.empty());
  AddressRange code = RangeOf(run.lines, "AllocateLarge");
  bool named_executable = false;
  for (size_t i = 1; i < log.size(); ++i) {
    std::vector<std::string> words = Split(log[i]);
    ASSERT_GE(words.size(), 3u) << log[i];
    EXPECT_EQ(words[0], "#" + std::to_string(i - 1)) << log[i];
    if (!StartsWith(words[2], "hg_large_alloc+0x")) continue;
    named_executable = true;
    EXPECT_NE(log[i].find("(build-id " + build_id + ")"), std::string::npos) << log[i];
    if (i == 1) {
      EXPECT_TRUE(code.Contains(ParseNumber(words[1]))) << "#0 is not in AllocateLarge";
    }
  }
  EXPECT_TRUE(named_executable) << "no frame names hg_large_alloc:\n" << Joined(log);
}

// By default the records go to large.log in the recording directory, not the program's stderr
// (issue 13 item 7: 8 MiB allocations are common in tests).
TEST(RecorderLargeAllocationTest, LogsExactlyOneRecordInTheRecordingDirectoryByDefault) {
  TempRoot root;
  RunResult run =
      RunToExit(ProgramPath("hg_large_alloc"), {}, RecordingEnv(root.path(), "large_threshold=1M"));
  ASSERT_TRUE(ExitedZero(run)) << run.stderr_text;
  EXPECT_EQ(run.stderr_text, "");
  std::vector<std::string> entries = root.Entries();
  ASSERT_EQ(entries.size(), 1u);
  std::vector<std::string> lines = FileLines(root.path() + "/" + entries[0] + "/large.log");
  size_t records = 0;
  for (const std::string& line : lines) records += StartsWith(line, kRecordPrefix);
  EXPECT_EQ(records, 1u) << Joined(lines);
  ExpectOneRecord(lines, run);
}

TEST(RecorderLargeAllocationTest, LargeLogStderrLogsExactlyOneRecordOnStderr) {
  TempRoot root;
  RunResult run = RunToExit(ProgramPath("hg_large_alloc"), {},
                            RecordingEnv(root.path(), "large_threshold=1M,large_log=stderr"));
  ASSERT_TRUE(ExitedZero(run)) << run.stderr_text;
  size_t records = 0;
  for (const std::string& line : run.stderr_lines) records += StartsWith(line, kRecordPrefix);
  EXPECT_EQ(records, 1u) << run.stderr_text;
  ExpectOneRecord(run.stderr_lines, run);
}

TEST(RecorderLargeAllocationTest, LargeLogFileReceivesTheRecordInsteadOfStderr) {
  TempRoot root;
  std::string log = root.path() + "/large.log";
  RunResult run = RunToExit(ProgramPath("hg_large_alloc"), {},
                            RecordingEnv(root.path(), "large_threshold=1M,large_log=" + log));
  ASSERT_TRUE(ExitedZero(run)) << run.stderr_text;
  EXPECT_EQ(run.stderr_text, "");
  std::vector<std::string> lines = FileLines(log);
  size_t records = 0;
  for (const std::string& line : lines) records += StartsWith(line, kRecordPrefix);
  EXPECT_EQ(records, 1u) << Joined(lines);
  ExpectOneRecord(lines, run);
}

// Records written by several threads at once stay whole: every frame line follows its own
// record's header, numbered #0, #1, ... without lines of another record in between.
TEST(RecorderLargeAllocationTest, ConcurrentRecordsDoNotInterleave) {
  TempRoot root;
  std::string log = root.path() + "/large.log";
  RunResult run = RunToExit(ProgramPath("hg_large_threads"), {"8", "1000"},
                            RecordingEnv(root.path(), "large_threshold=1M,large_log=" + log));
  ASSERT_TRUE(ExitedZero(run)) << run.stderr_text;
  std::vector<std::string> lines = FileLines(log);
  size_t records = 0, misplaced = 0;
  int next_frame = -1;  // no record open yet
  for (const std::string& line : lines) {
    if (StartsWith(line, kRecordPrefix)) {
      ++records;
      next_frame = 0;
      continue;
    }
    std::vector<std::string> words = Split(line);
    bool in_place =
        next_frame >= 0 && !words.empty() && words[0] == "#" + std::to_string(next_frame);
    misplaced += in_place ? 0 : 1;
    next_frame = in_place ? next_frame + 1 : next_frame;
  }
  EXPECT_EQ(records, ParseNumber(FieldOf(run.lines, "expected_records").at(0)));
  EXPECT_EQ(misplaced, 0u) << "frame lines out of their record, of " << lines.size() << " lines";
}

TEST(RecorderLargeAllocationTest, LinkedProgramGetsExactlyOneCallback) {
  TempRoot root;
  RunResult run = RunToExit(ProgramPath("hg_large_callback"), {},
                            RecordingEnv(root.path(), "large_threshold=1M", /*preload=*/false));
  ASSERT_TRUE(ExitedZero(run)) << run.stderr_text;
  EXPECT_EQ(FieldOf(run.lines, "callbacks"), std::vector<std::string>{"1"});
  EXPECT_EQ(FieldOf(run.lines, "user_data_calls"), std::vector<std::string>{"1"});
  EXPECT_EQ(FieldOf(run.lines, "callback_size"), std::vector<std::string>{"2097152"});
  EXPECT_EQ(FieldOf(run.lines, "callback_address_matches"), std::vector<std::string>{"1"});
  std::vector<std::string> depth = FieldOf(run.lines, "callback_depth");
  ASSERT_EQ(depth.size(), 1u);
  EXPECT_GT(ParseNumber(depth[0]), 0u);
  EXPECT_EQ(root.Entries().size(), 1u) << "the linked program did not record";
}

}  // namespace
}  // namespace heapgraph::proctest
