#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "roots/TaskList.h"

namespace heapgraph::roots {
namespace {

TEST(TaskListTest, FormatsThePath) {
  EXPECT_EQ(std::string(TaskList(123).path()), "/proc/123/task");
  EXPECT_EQ(std::string(TaskList().path()), "/proc/" + std::to_string(getpid()) + "/task");
  EXPECT_EQ(TaskList().pid(), getpid());
}

TEST(TaskListTest, FormatDecimal) {
  char buffer[8];
  EXPECT_EQ(TaskList::FormatDecimal(0, buffer), 1u);
  EXPECT_STREQ(buffer, "0");
  EXPECT_EQ(TaskList::FormatDecimal(4194304, buffer), 7u);
  EXPECT_STREQ(buffer, "4194304");
  EXPECT_EQ(TaskList::FormatDecimal(12345678, buffer), 0u);  // needs 9 bytes
}

TEST(TaskListTest, ListsEveryThread) {
  std::atomic<pid_t> other{0};
  std::atomic<bool> done{false};
  std::thread thread([&] {
    other = static_cast<pid_t>(syscall(SYS_gettid));
    while (!done) std::this_thread::yield();
  });
  while (other == 0) std::this_thread::yield();
  std::vector<pid_t> tids(64);
  std::vector<char> dirents(4096);
  const long n = TaskList().Read(tids, dirents);
  done = true;
  thread.join();
  ASSERT_GE(n, 2);
  tids.resize(static_cast<size_t>(n));
  EXPECT_NE(std::find(tids.begin(), tids.end(), getpid()), tids.end());
  EXPECT_NE(std::find(tids.begin(), tids.end(), other.load()), tids.end());
}

TEST(TaskListTest, CountThreadsIsTheStatusFilesCount) {
  const long alone = TaskList().CountThreadsFromStatus();
  ASSERT_GE(alone, 1);
  EXPECT_EQ(TaskList().CountThreads(), alone);
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] {
      while (!done) std::this_thread::yield();
    });
  }
  EXPECT_EQ(TaskList().CountThreads(), alone + 3);
  EXPECT_EQ(TaskList().CountThreadsFromStatus(), alone + 3);
  done = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(TaskList(0x3fffffff).CountThreads(), -ENOENT);
}

TEST(TaskListTest, ReportsTooSmallBuffersAndMissingProcesses) {
  std::atomic<bool> done{false};
  std::thread thread([&] {
    while (!done) std::this_thread::yield();
  });
  std::vector<pid_t> one(1);
  std::vector<char> dirents(4096);
  EXPECT_EQ(TaskList().Read(one, dirents), -ENOBUFS);
  EXPECT_EQ(TaskList(0x3fffffff).Read(one, dirents), -ENOENT);
  done = true;
  thread.join();
}

TEST(TaskListTest, ThreadStateReadsTheStatLetter) {
  const TaskList tasks;
  EXPECT_EQ(tasks.ThreadState(static_cast<pid_t>(syscall(SYS_gettid))), 'R');
  EXPECT_EQ(tasks.ThreadState(0x3fffffff), 0);
}

}  // namespace
}  // namespace heapgraph::roots
