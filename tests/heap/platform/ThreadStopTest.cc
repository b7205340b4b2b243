// tests/heap: ThreadStop: a tool thread started with one ends when Stop() writes its descriptor,
// and is joined; without a started thread, after a stop, or in a forked child, Stop() ends nothing.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "heap/platform/ThreadStop.h"
#include "heap/platform/ToolThread.h"

namespace heapgraph {
namespace {

std::atomic<int> g_running{0};

// Polls the stop's descriptor until it is readable, as a tool thread's wait does.
void* WaitForStop(void* argument) {
  const int fd = static_cast<ThreadStop*>(argument)->fd();
  g_running.fetch_add(1);
  struct pollfd p = {fd, POLLIN, 0};
  while (poll(&p, 1, -1) != 1 || (p.revents & POLLIN) == 0) {
  }
  g_running.fetch_sub(1);
  return nullptr;
}

bool Eventually(int running) {
  for (int i = 0; i < 5000 && g_running.load() != running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return g_running.load() == running;
}

TEST(ThreadStopTest, StopEndsAndJoinsTheThread) {
  ThreadStop stop;
  EXPECT_FALSE(stop.Stop(10));  // nothing started
  ASSERT_EQ(ToolThread::Start(&WaitForStop, &stop, 0, &stop), 0);
  EXPECT_GE(stop.fd(), 0);
  ASSERT_TRUE(Eventually(1));
  EXPECT_TRUE(stop.Stop(1000));
  EXPECT_EQ(g_running.load(), 0);  // joined: it has returned
  EXPECT_FALSE(stop.Stop(10));     // once
}

// Request() only asks: the thread ends while the caller goes on; Stop() then joins it.
TEST(ThreadStopTest, RequestEndsTheThreadWithoutWaitingAndStopJoinsIt) {
  ThreadStop stop;
  EXPECT_FALSE(stop.Request());  // nothing started
  ASSERT_EQ(ToolThread::Start(&WaitForStop, &stop, 0, &stop), 0);
  ASSERT_TRUE(Eventually(1));
  EXPECT_TRUE(stop.Request());
  EXPECT_TRUE(stop.Request());  // asking twice writes once
  EXPECT_TRUE(Eventually(0));   // it ended without a join
  EXPECT_TRUE(stop.Stop(1000));
  EXPECT_FALSE(stop.Request());  // stopped: nothing left to ask
  EXPECT_FALSE(stop.Stop(10));
}

TEST(ThreadStopTest, AnEarlierStopDoesNotEndTheNextThread) {
  ThreadStop stop;
  ASSERT_EQ(ToolThread::Start(&WaitForStop, &stop, 0, &stop), 0);
  ASSERT_TRUE(Eventually(1));
  ASSERT_TRUE(stop.Stop(1000));
  ASSERT_EQ(ToolThread::Start(&WaitForStop, &stop, 0, &stop), 0);
  ASSERT_TRUE(Eventually(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(g_running.load(), 1);  // still waiting
  EXPECT_TRUE(stop.Stop(1000));
  EXPECT_EQ(g_running.load(), 0);
}

TEST(ThreadStopTest, AForkedChildEndsNoneOfItsParentsThreads) {
  ThreadStop stop;
  ASSERT_EQ(ToolThread::Start(&WaitForStop, &stop, 0, &stop), 0);
  ASSERT_TRUE(Eventually(1));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(stop.Stop(10) ? 1 : 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(g_running.load(), 1);  // the child wrote nothing
  EXPECT_TRUE(stop.Stop(1000));
  EXPECT_EQ(g_running.load(), 0);
}

}  // namespace
}  // namespace heapgraph
