// DumpRetention: runs whose process is gone from this pid namespace are classified and pruned
// only once they cannot be alive elsewhere (recorded exit or stale heartbeat). The runs are real
// sessions written by forked children that are then reaped, like a process killed without a
// trace; a fresh heartbeat plays the run living in another container.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <string>

#include "heap/session/DumpRetention.h"
#include "heap/session/SessionFile.h"
#include "heap/store/MappedFile.h"
#include "heap/store/RecordingDirectory.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;

uint64_t WallClockNs() {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * kSecond + static_cast<uint64_t>(t.tv_nsec);
}

// A forked child writes `name`/session (heartbeat every 100 ms, one beat) and dies without
// recording an exit; then its start and heartbeat times are set `age_ns` into the past.
void MakeDeadRun(const TempDir& root, const std::string& name, uint64_t age_ns,
                 uint32_t run_tag = 0) {
  ASSERT_EQ(0, mkdirat(root.fd(), name.c_str(), 0700));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int dir = openat(root.fd(), name.c_str(), O_RDONLY | O_DIRECTORY);
    static SessionFile session;
    if (dir < 0 || !session.Create(dir, 24, 0, 100, 0)) _exit(1);
    session.SetRunTag(run_tag);
    session.Beat();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int fd = openat(root.fd(), (name + "/" + format::kSessionFile).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  uint64_t when = WallClockNs() - age_ns;
  ASSERT_EQ(8, pwrite(fd, &when, 8, offsetof(format::SessionHeader, start_time_ns)));
  ASSERT_EQ(8, pwrite(fd, &when, 8,
                      offsetof(format::SessionHeader, record) +
                          offsetof(format::SessionRecord, heartbeat_realtime_ns)));
  close(fd);
}

bool Exists(const TempDir& root, const std::string& path) {
  struct stat st;
  return fstatat(root.fd(), path.c_str(), &st, 0) == 0;
}

std::string Executable() {
  char path[4096] = {};
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return std::string(path, n > 0 ? static_cast<size_t>(n) : 0);
}

TEST(DumpRetentionTest, RunWithAFreshHeartbeatIsNeitherClassifiedNorPruned) {
  TempDir root;
  MakeDeadRun(root, "old", 300 * kSecond);
  MakeDeadRun(root, "older", 600 * kSecond);
  MakeDeadRun(root, "elsewhere", 0);  // beat just now: may run in another pid namespace
  EXPECT_EQ(1u, DumpRetention::Run(root.fd(), "own", Executable().c_str(), 1));
  EXPECT_TRUE(Exists(root, "old/exit"));
  EXPECT_FALSE(Exists(root, "older"));  // the oldest finished run beyond keep=1
  EXPECT_TRUE(Exists(root, "elsewhere/session"));
  EXPECT_FALSE(Exists(root, "elsewhere/exit"));
}

TEST(DumpRetentionTest, PrunedRunIsHiddenBeforeItIsEmptiedAndALeftoverIsFinished) {
  TempDir root;
  // What a start that exited halfway through a removal leaves: a hidden, partly emptied run.
  std::string leftover = std::string(DumpRetention::kRemovingPrefix) + "1234-5678";
  ASSERT_EQ(0, mkdirat(root.fd(), leftover.c_str(), 0700));
  int fd = openat(root.fd(), (leftover + "/tree").c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  MakeDeadRun(root, "old", 300 * kSecond);
  MakeDeadRun(root, "older", 600 * kSecond);
  EXPECT_EQ(1u, DumpRetention::Run(root.fd(), "own", Executable().c_str(), 1));
  EXPECT_FALSE(Exists(root, leftover));
  EXPECT_FALSE(Exists(root, "older"));
  EXPECT_FALSE(Exists(root, std::string(DumpRetention::kRemovingPrefix) + "older"));
  EXPECT_TRUE(Exists(root, "old/session"));
}

ino_t InodeOf(const TempDir& root, const std::string& path) {
  struct stat st;
  return fstatat(root.fd(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_ino : 0;
}

void WriteFileAt(const TempDir& root, const std::string& path, const std::string& text) {
  int fd = openat(root.fd(), path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(ssize_t(text.size()), write(fd, text.data(), text.size()));
  close(fd);
}

// A pruned run becomes a spare: its mapped files emptied and parked (same inodes), a stack table
// shared with another recording and every other file removed.
TEST(DumpRetentionTest, PrunedRunBecomesASpareWithItsMappedFilesParkedEmpty) {
  TempDir root;
  MakeDeadRun(root, "old", 300 * kSecond);
  MakeDeadRun(root, "older", 600 * kSecond);
  ASSERT_NO_FATAL_FAILURE(WriteFileAt(root, "older/heap.tree", "blocks"));
  ASSERT_NO_FATAL_FAILURE(WriteFileAt(root, "older/stacks", "nodes"));
  ASSERT_EQ(0, linkat(root.fd(), "older/stacks", root.fd(), "shared-stacks", 0));
  ASSERT_NO_FATAL_FAILURE(WriteFileAt(root, "older/exit-check", "leaked_blocks 0\n"));
  ino_t heap = InodeOf(root, "older/heap.tree"), session = InodeOf(root, "older/session");
  EXPECT_EQ(1u, DumpRetention::Run(root.fd(), "own", Executable().c_str(), 1));
  EXPECT_FALSE(Exists(root, "older"));
  const std::string spare = std::string(RecordingDirectory::kSparePrefix) + "0/";
  const std::string parked = spare + MappedFile::kReusePrefix;
  EXPECT_EQ(heap, InodeOf(root, parked + "heap.tree"));
  EXPECT_EQ(session, InodeOf(root, parked + "session"));
  struct stat st;
  ASSERT_EQ(0, fstatat(root.fd(), (parked + "heap.tree").c_str(), &st, 0));
  EXPECT_EQ(0, st.st_size) << "emptied";
  EXPECT_FALSE(Exists(root, parked + "stacks")) << "shared with another recording: not parked";
  EXPECT_FALSE(Exists(root, spare + "stacks"));
  EXPECT_TRUE(Exists(root, "shared-stacks"));
  EXPECT_FALSE(Exists(root, spare + "exit-check"));
  EXPECT_FALSE(Exists(root, spare + "exit"));
  EXPECT_TRUE(Exists(root, "old/session"));
}

TEST(DumpRetentionTest, PrunedRunIsRemovedWhenEverySpareSlotIsTaken) {
  TempDir root;
  for (uint32_t slot = 0; slot < RecordingDirectory::kSpareSlots; ++slot) {
    std::string name = std::string(RecordingDirectory::kSparePrefix) + std::to_string(slot);
    ASSERT_EQ(0, mkdirat(root.fd(), name.c_str(), 0700));
  }
  MakeDeadRun(root, "old", 300 * kSecond);
  MakeDeadRun(root, "older", 600 * kSecond);
  EXPECT_EQ(1u, DumpRetention::Run(root.fd(), "own", Executable().c_str(), 1));
  EXPECT_FALSE(Exists(root, "older"));
  EXPECT_FALSE(Exists(root, std::string(DumpRetention::kRemovingPrefix) + "older"));
  std::string extra = std::string(RecordingDirectory::kSparePrefix) +
                      std::to_string(RecordingDirectory::kSpareSlots);
  EXPECT_FALSE(Exists(root, extra));
}

// The finished runs of a `heapgraph run` in progress (a busy run_tag) are classified but not
// removed: its summary reads them when it ends. Other runs' and untagged ones are pruned to `keep`.
TEST(DumpRetentionTest, FinishedRunsOfARunInProgressAreKept) {
  TempDir root;
  MakeDeadRun(root, "busy-new", 300 * kSecond, 7);
  MakeDeadRun(root, "busy-old", 400 * kSecond, 7);
  MakeDeadRun(root, "ended", 500 * kSecond, 9);
  MakeDeadRun(root, "untagged", 600 * kSecond);
  const uint32_t busy[] = {7};
  EXPECT_EQ(1u, DumpRetention::Run(root.fd(), "own", Executable().c_str(), 1, busy));
  EXPECT_TRUE(Exists(root, "busy-new/exit"));
  EXPECT_TRUE(Exists(root, "busy-old/exit"));
  EXPECT_TRUE(Exists(root, "ended/exit"));  // the newest of the others: keep=1
  EXPECT_FALSE(Exists(root, "untagged"));
  // Once that run has ended, the same root keeps one run.
  EXPECT_EQ(2u, DumpRetention::Run(root.fd(), "own", Executable().c_str(), 1));
  EXPECT_TRUE(Exists(root, "busy-new/exit"));
  EXPECT_FALSE(Exists(root, "busy-old"));
  EXPECT_FALSE(Exists(root, "ended"));
}

// Asked for every executable (heapgraph run's pruning of its root), each executable keeps its own
// newest `keep` runs.
TEST(DumpRetentionTest, EveryExecutableKeepsItsOwnNewestRuns) {
  TempDir root;
  MakeDeadRun(root, "this-new", 300 * kSecond);
  MakeDeadRun(root, "this-old", 400 * kSecond);
  MakeDeadRun(root, "other-new", 500 * kSecond);
  MakeDeadRun(root, "other-old", 600 * kSecond);
  for (const char* name : {"other-new", "other-old"}) {
    int fd = openat(root.fd(), (std::string(name) + "/" + format::kSessionFile).c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    const char other[] = "/usr/bin/other";
    ASSERT_EQ(ssize_t(sizeof(other)),
              pwrite(fd, other, sizeof(other), offsetof(format::SessionHeader, executable)));
    close(fd);
  }
  EXPECT_EQ(2u, DumpRetention::Run(root.fd(), "own", nullptr, 1));
  EXPECT_TRUE(Exists(root, "this-new/exit"));
  EXPECT_FALSE(Exists(root, "this-old"));
  EXPECT_TRUE(Exists(root, "other-new/exit"));
  EXPECT_FALSE(Exists(root, "other-old"));
}

// A recording directory's session read by path: never through a link, and nothing from a
// directory without one.
TEST(DumpRetentionTest, ReadSessionInReadsADirectoryByPathNeverThroughALink) {
  TempDir root;
  MakeDeadRun(root, "run", 300 * kSecond);
  ASSERT_EQ(0, symlinkat("run", root.fd(), "link"));
  ASSERT_EQ(0, mkdirat(root.fd(), "empty", 0700));
  format::SessionHeader session = {};
  bool has_record = false;
  ASSERT_TRUE(DumpRetention::ReadSessionIn(root.Path("run").c_str(), &session, &has_record));
  EXPECT_TRUE(has_record);
  EXPECT_EQ(Executable(), session.executable);
  EXPECT_FALSE(DumpRetention::ReadSessionIn(root.Path("link").c_str(), &session, &has_record));
  EXPECT_FALSE(DumpRetention::ReadSessionIn(root.Path("empty").c_str(), &session, &has_record));
  EXPECT_FALSE(DumpRetention::ReadSessionIn(root.Path("missing").c_str(), &session, &has_record));
}

TEST(DumpRetentionTest, StalenessFollowsTheHeartbeatPeriod) {
  format::SessionHeader s = {};
  s.record.heartbeat_interval_ms = 1000;
  s.start_time_ns = 100 * kSecond;
  s.record.heartbeat_realtime_ns = 200 * kSecond;
  EXPECT_TRUE(DumpRetention::MayBeAliveElsewhere(s, true, 202 * kSecond));
  EXPECT_FALSE(DumpRetention::MayBeAliveElsewhere(s, true, 203 * kSecond + 1));
  s.state.store(format::kSessionExited);  // it said it exited: dead wherever it ran
  EXPECT_FALSE(DumpRetention::MayBeAliveElsewhere(s, true, 200 * kSecond));
  s.state.store(format::kSessionRecording);
  s.record.heartbeat_interval_ms = 0;  // no heartbeats: a fixed bound after its start
  EXPECT_TRUE(DumpRetention::MayBeAliveElsewhere(s, true, 100 * kSecond + 599 * kSecond));
  EXPECT_FALSE(DumpRetention::MayBeAliveElsewhere(s, true, 100 * kSecond + 601 * kSecond));
  EXPECT_TRUE(DumpRetention::MayBeAliveElsewhere(s, false, 100 * kSecond + 599 * kSecond));
}

}  // namespace
}  // namespace heapgraph
