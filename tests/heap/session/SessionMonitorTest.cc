// tests/heap: SessionMonitor: a stoppable monitor beats until Stop() ends its thread, which is then
// gone from the process; a monitor that is not stoppable, or one started by a parent before a
// fork, is not stopped.
#include <dirent.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "heap/session/SessionFile.h"
#include "heap/session/SessionMonitor.h"
#include "heap/store/PersistedFormat.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

int ThreadCount() {
  DIR* dir = opendir("/proc/self/task");
  int n = 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

// Polls `done` for up to 5 s.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 5000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// A session the monitor may beat as long as the process lives (never destroyed: a monitor that
// is not stopped outlives the test).
SessionFile* NewSession(const TempDir& dir) {
  auto* session = new SessionFile;
  EXPECT_TRUE(session->Create(dir.fd(), 8, 0, 10));
  return session;
}

uint64_t Beats(const SessionFile* session) {
  return __atomic_load_n(&session->header()->record.heartbeat_count, __ATOMIC_RELAXED);
}

SessionMonitor::Settings Beating(SessionFile* session, bool stoppable) {
  SessionMonitor::Settings settings;
  settings.session = session;
  settings.interval_ms = 10;
  settings.stoppable = stoppable;
  return settings;
}

TEST(SessionMonitorTest, StopEndsAStoppableMonitorsThread) {
  TempDir dir;
  SessionFile* session = NewSession(dir);
  const int before = ThreadCount();
  ASSERT_TRUE(SessionMonitor::Start(Beating(session, true)));
  EXPECT_EQ(ThreadCount(), before + 1);
  ASSERT_TRUE(Eventually([&] { return Beats(session) >= 3; }));
  EXPECT_TRUE(SessionMonitor::Stop());
  EXPECT_TRUE(Eventually([&] { return ThreadCount() == before; }));  // the kernel's reaping
  const uint64_t beats = Beats(session);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Beats(session), beats);      // no heartbeat after the stop
  EXPECT_FALSE(SessionMonitor::Stop());  // once
}

TEST(SessionMonitorTest, AStoppableMonitorCanBeStartedAgainAfterAStop) {
  TempDir dir;
  SessionFile* session = NewSession(dir);
  ASSERT_TRUE(SessionMonitor::Start(Beating(session, true)));
  EXPECT_TRUE(SessionMonitor::Stop());
  // The stop's byte is not taken for a stop of the next monitor.
  ASSERT_TRUE(SessionMonitor::Start(Beating(session, true)));
  const uint64_t beats = Beats(session);
  EXPECT_TRUE(Eventually([&] { return Beats(session) >= beats + 3; }));
  EXPECT_TRUE(SessionMonitor::Stop());
}

TEST(SessionMonitorTest, AForkedChildDoesNotStopItsParentsMonitor) {
  TempDir dir;
  SessionFile* session = NewSession(dir);
  ASSERT_TRUE(SessionMonitor::Start(Beating(session, true)));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(SessionMonitor::Stop() ? 1 : 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const uint64_t beats = Beats(session);
  EXPECT_TRUE(Eventually([&] { return Beats(session) >= beats + 3; }));  // still beating
  EXPECT_TRUE(SessionMonitor::Stop());
}

// The monitor's eventfd (a descriptor of its own above the host's numbers), -1 if none.
int StopDescriptor() {
  DIR* dir = opendir("/proc/self/fd");
  int found = -1;
  while (dirent* e = readdir(dir)) {
    char path[300], target[PATH_MAX] = "";
    snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
    if (readlink(path, target, sizeof(target) - 1) > 0 && strstr(target, "eventfd") != nullptr) {
      found = atoi(e->d_name);
    }
  }
  closedir(dir);
  return found;
}

// A program that closes heapgraph's descriptors (closefrom) leaves a monitor that beats on as
// before, never stopped and never spinning on the closed descriptor.
TEST(SessionMonitorTest, AMonitorWhoseStopDescriptorWasClosedBeatsOnUnstopped) {
  TempDir dir;
  SessionFile* session = NewSession(dir);
  ASSERT_TRUE(SessionMonitor::Start(Beating(session, true)));
  const int fd = StopDescriptor();
  ASSERT_GE(fd, 0);
  close(fd);
  const uint64_t beats = Beats(session);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t later = Beats(session);
  EXPECT_GE(later, beats + 3);
  EXPECT_LE(later, beats + 40);  // every 10 ms, not in a loop
  EXPECT_FALSE(SessionMonitor::Stop());
}

TEST(SessionMonitorTest, AMonitorThatIsNotStoppableIsNotStopped) {
  TempDir dir;
  SessionFile* session = NewSession(dir);
  ASSERT_TRUE(SessionMonitor::Start(Beating(session, false)));
  EXPECT_FALSE(SessionMonitor::Stop());
  const uint64_t beats = Beats(session);
  EXPECT_TRUE(Eventually([&] { return Beats(session) >= beats + 3; }));
}

}  // namespace
}  // namespace heapgraph
