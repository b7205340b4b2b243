// Bad HEAPGRAPH_OPTIONS never hurt the program (tests/programs/hg_simple.cc): it runs to exit 0
// with its normal output; every problem is one stderr line starting "heapgraph: "; a recording
// directory that cannot be used disables recording with one line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

RunResult RunSimple(const std::string& options) {
  return RunToExit(
      ProgramPath("hg_simple"), {},
      {std::string("LD_PRELOAD=") + HEAPGRAPH_PRELOAD, "HEAPGRAPH_OPTIONS=" + options});
}

// Exit 0, normal output, and `recording` from heapgraph_is_recording().
void ExpectUnaffected(const RunResult& run, int recording) {
  ASSERT_TRUE(run.status.has_value()) << "hung";
  EXPECT_TRUE(WIFEXITED(*run.status) && WEXITSTATUS(*run.status) == 0)
      << "wait status " << *run.status << "\n"
      << run.stderr_text;
  EXPECT_EQ(FieldOf(run.lines, "result"), std::vector<std::string>{"499500"});
  EXPECT_EQ(FieldOf(run.lines, "recording"), std::vector<std::string>{std::to_string(recording)});
}

// stderr is exactly one "heapgraph: " line per entry of `mentions`, each naming its entry.
void ExpectComplaints(const RunResult& run, const std::vector<std::string>& mentions) {
  ASSERT_EQ(run.stderr_lines.size(), mentions.size()) << run.stderr_text;
  for (size_t i = 0; i < mentions.size(); ++i) {
    EXPECT_EQ(run.stderr_lines[i].rfind("heapgraph: ", 0), 0u) << run.stderr_lines[i];
    EXPECT_NE(run.stderr_lines[i].find(mentions[i]), std::string::npos)
        << "line " << i << " does not mention " << mentions[i] << ": " << run.stderr_lines[i];
  }
}

TEST(RecorderConfigTest, EachBadEntryIsOneLineAndTheRestStillApplies) {
  TempRoot root;
  RunResult run =
      RunSimple("depth=999,bogus=1,dir=" + root.path() + ",large_threshold=abc,shards=3,noequals");
  ExpectUnaffected(run, 1);
  ExpectComplaints(run, {"depth", "bogus", "large_threshold", "shards", "noequals"});
  ASSERT_EQ(root.Entries().size(), 1u) << "dir= was not applied";
  RecordingReader reader(root.path() + "/" + root.Entries()[0]);
  ASSERT_TRUE(reader.session().has_value());
  EXPECT_EQ(reader.session()->max_depth, 32u) << "the rejected depth=999 was applied";
  EXPECT_EQ(reader.shards().size(), 64u + 1u) << "the rejected shards=3 was applied";
}

TEST(RecorderConfigTest, ColonSeparatorsWork) {
  TempRoot root;
  RunResult run = RunSimple("depth=999:bogus=1:dir=" + root.path() + ":depth=8");
  ExpectUnaffected(run, 1);
  ExpectComplaints(run, {"depth", "bogus"});
  ASSERT_EQ(root.Entries().size(), 1u);
  RecordingReader reader(root.path() + "/" + root.Entries()[0]);
  EXPECT_EQ(reader.session()->max_depth, 8u);
}

TEST(RecorderConfigTest, ForbiddenDirectoryIsOneLineAndDisablesRecording) {
  RunResult run = RunSimple("depth=999,bogus=1,dir=/proc/forbidden");
  ExpectUnaffected(run, 0);
  ExpectComplaints(run, {"depth", "bogus", "/proc/forbidden"});
}

TEST(RecorderConfigTest, DirectoryUnderAFileIsOneLineAndDisablesRecording) {
  TempRoot root;
  std::string file = root.path() + "/file";
  std::ofstream(file) << "not a directory";
  RunResult run = RunSimple("dir=" + file + "/recordings");
  ExpectUnaffected(run, 0);
  ExpectComplaints(run, {file});
  EXPECT_EQ(root.Entries(), std::vector<std::string>{"file"});
}

TEST(RecorderConfigTest, RootWritableByOthersIsRefusedWithOneLine) {
  TempRoot root;
  ASSERT_EQ(chmod(root.path().c_str(), 0777), 0);
  RunResult run = RunSimple("dir=" + root.path());
  ExpectUnaffected(run, 0);
  ExpectComplaints(run, {root.path()});
  EXPECT_TRUE(root.Entries().empty());
}

TEST(RecorderConfigTest, EnabledZeroRecordsNothingAndSaysNothing) {
  TempRoot root;
  RunResult run = RunSimple("enabled=0,dir=" + root.path());
  ExpectUnaffected(run, 0);
  EXPECT_EQ(run.stderr_text, "");
  EXPECT_TRUE(root.Entries().empty());
}

}  // namespace
}  // namespace heapgraph::proctest
