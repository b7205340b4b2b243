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
void MakeDeadRun(const TempDir& root, const std::string& name, uint64_t age_ns) {
  ASSERT_EQ(0, mkdirat(root.fd(), name.c_str(), 0700));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int dir = openat(root.fd(), name.c_str(), O_RDONLY | O_DIRECTORY);
    static SessionFile session;
    if (dir < 0 || !session.Create(dir, 24, 0, 100, 0)) _exit(1);
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
