// RunSummary on synthetic run roots: recording directories "<pid>-<start ticks>" with a session
// header (its run_tag) and the at-exit check's verdict, as the recorder writes them.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "heap/store/PersistedFormat.h"
#include "tests/TempDir.h"
#include "tools/RunSummary.h"

namespace heapgraph::tools {
namespace {

constexpr uint32_t kTag = 0x5eed;

// A recording directory `name` in `root` whose session carries `tag`; `verdict` is the text of its
// exit-check file ("" = no check ran).
void MakeRecording(const TempDir& root, const std::string& name, uint32_t tag,
                   const std::string& verdict) {
  std::filesystem::path dir = root.Path(name);
  std::filesystem::create_directory(dir);
  format::SessionHeader header{};
  memcpy(header.file.magic, format::kSessionMagic, sizeof(header.file.magic));
  header.file.version = format::kSessionVersion;
  header.file.header_size = sizeof(format::SessionHeader);
  header.run_tag = tag;
  std::ofstream(dir / format::kSessionFile, std::ios::binary)
      .write(reinterpret_cast<const char*>(&header), sizeof(header));
  if (!verdict.empty()) std::ofstream(dir / format::kExitCheckFile) << verdict;
}

RunSummary Summarize(const TempDir& root) {
  return RunSummary(root.path(), root.Path("leaks-%p.json"), kTag,
                    std::filesystem::file_time_type::min());
}

TEST(RunSummaryTest, CountsOnlyTheRecordingsOfItsRun) {
  TempDir root;
  MakeRecording(root, "100-5000", kTag, "leaked_blocks 2\nleaked_bytes 64\n");
  MakeRecording(root, "101-5001", kTag, "leaked_blocks 0\nleaked_bytes 0\n");
  MakeRecording(root, "102-5002", kTag + 1, "leaked_blocks 9\nleaked_bytes 9\n");  // another run
  MakeRecording(root, "103-5003", 0, "leaked_blocks 9\nleaked_bytes 9\n");         // no run
  MakeRecording(root, "104-5004", kTag, "");                                       // not checked
  MakeRecording(root, "105-5005", kTag, "failed\n");
  std::filesystem::create_directory(root.Path("106-5006"));  // no session: not a recording
  std::filesystem::create_directory(root.Path("spare"));
  RunSummary summary = Summarize(root);
  ASSERT_EQ(summary.processes().size(), 4u);
  EXPECT_EQ(summary.leaked_processes(), 1u);
  EXPECT_EQ(summary.processes()[0].blocks, 2u);
  EXPECT_EQ(summary.processes()[0].bytes, 64u);
  EXPECT_EQ(summary.Line(false),
            "heapgraph: run summary: 3 of 4 recorded processes checked, 1 with leaks; pid 100: 2 "
            "leaked blocks, 64 bytes; pid 101: no leaks; pid 104: not checked; pid 105: the check "
            "could not run");
}

// An exec'd process has a directory per image (same pid, same start time): one process, its
// checked image. A pid reused within the run (another start time) is another process, and its
// leaks count even when the first holder of the pid was clean.
TEST(RunSummaryTest, OneProcessPerPidAndStartTime) {
  TempDir root;
  MakeRecording(root, "200-7000", kTag, "");  // a shell before it exec'd the program
  MakeRecording(root, "200-7000.1", kTag, "leaked_blocks 0\nleaked_bytes 0\n");
  MakeRecording(root, "300-7001", kTag, "leaked_blocks 0\nleaked_bytes 0\n");
  MakeRecording(root, "300-9000", kTag, "leaked_blocks 1\nleaked_bytes 8\n");  // pid reused
  RunSummary summary = Summarize(root);
  EXPECT_EQ(summary.leaked_processes(), 1u);
  EXPECT_EQ(summary.Line(false),
            "heapgraph: run summary: 3 of 3 recorded processes checked, 1 with leaks; pid 200: no "
            "leaks; pid 300: no leaks; pid 300: 1 leaked blocks, 8 bytes");
}

// A FIFO planted as a session or a verdict never blocks the summary: no session, no recording;
// no regular verdict, not checked.
TEST(RunSummaryTest, AFifoInARecordingNeverBlocks) {
  TempDir root;
  std::filesystem::create_directory(root.Path("400-100"));
  ASSERT_EQ(0, mkfifo(root.Path("400-100/session").c_str(), 0600));
  MakeRecording(root, "401-100", kTag, "");
  ASSERT_EQ(0, mkfifo(root.Path(std::string("401-100/") + format::kExitCheckFile).c_str(), 0600));
  RunSummary summary = Summarize(root);
  ASSERT_EQ(summary.processes().size(), 1u);
  EXPECT_EQ(summary.processes()[0].pid, 401);
  EXPECT_FALSE(summary.processes()[0].checked);
}

}  // namespace
}  // namespace heapgraph::tools
