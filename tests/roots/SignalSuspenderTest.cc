#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "roots/ProcessMappings.h"
#include "roots/RawSyscall.h"
#include "roots/SignalSuspender.h"
#include "roots/VectorState.h"
#include "tests/roots/MagicThreads.h"
#include "tests/roots/RegisterWord.h"
#include "tests/roots/ThreadChurn.h"

namespace heapgraph::roots {
namespace {

using testing::MagicThreads;

const ThreadInfo* FindTid(std::span<const ThreadInfo> threads, pid_t tid) {
  const ThreadInfo* found = nullptr;
  for (const ThreadInfo& t : threads) {
    if (t.tid == tid) {
      if (found != nullptr) return nullptr;
      found = &t;
    }
  }
  return found;
}

size_t CountPresent(std::span<const ThreadInfo> threads, const std::vector<pid_t>& expected) {
  size_t n = 0;
  for (pid_t tid : expected) n += FindTid(threads, tid) != nullptr ? 1 : 0;
  return n;
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(SignalSuspenderTest, SuspendsEveryThreadAndRecordsRegisters) {
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(8, 8));
  SignalSuspender suspender;
  ASSERT_TRUE(suspender.SuspendAll()) << suspender.error();
  EXPECT_TRUE(suspender.suspended());
  suspender.ResumeAll();
  EXPECT_FALSE(suspender.suspended());
  const std::span<const ThreadInfo> threads = suspender.threads();
  ASSERT_GE(threads.size(), 17u);
  EXPECT_TRUE(threads[0].is_caller);
  EXPECT_EQ(threads[0].tid, static_cast<pid_t>(syscall(SYS_gettid)));
  ProcessMappings maps;
  ASSERT_TRUE(maps.Read());
  for (const MagicThreads::Thread& m : magic.threads()) {
    const ThreadInfo* t = FindTid(threads, m.tid.load());
    ASSERT_NE(t, nullptr) << m.tid.load();
    const ProcessMappings::Mapping* stack = maps.Find(t->stack_pointer);
    ASSERT_NE(stack, nullptr);
    EXPECT_TRUE(stack->writable);
    EXPECT_EQ(t->regs[ThreadInfo::kStackPointer], t->stack_pointer);
    if (m.spinning) {
#if defined(__x86_64__)
      EXPECT_EQ(t->regs[ThreadInfo::kRbx], m.rbx_magic);
      EXPECT_EQ(t->regs[ThreadInfo::kR12], m.r12_magic);
      EXPECT_NE(t->regs[ThreadInfo::kFsBase], 0u);
#endif
      EXPECT_EQ(FirstWord(VectorState(t->vector_bytes).Xmm(7)), m.xmm_magic);
    } else {
      EXPECT_TRUE(stack->Contains(m.local_address.load()));
      EXPECT_GE(m.local_address.load(), t->stack_pointer);
    }
  }
}

// No fixed capacity: a suspension that meets more threads than it prepared slots for resumes
// them, grows and suspends again (the first attempt made too small through the test hook).
TEST(SignalSuspenderTest, GrowsWhenThreadsOutnumberTheSlots) {
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(2, 40, 64 * 1024));
  const std::vector<pid_t> expected = magic.Tids();
  SignalSuspender::Options options;
  options.first_slots_for_testing = 4;
  SignalSuspender suspender(options);
  ASSERT_TRUE(suspender.SuspendAll()) << suspender.error();
  const size_t present = CountPresent(suspender.threads(), expected);
  suspender.ResumeAll();
  EXPECT_EQ(present, expected.size());
  EXPECT_GE(suspender.regrown(), 1);
  // Resumed after the attempt that ran out: a later suspension finds every thread at once.
  SignalSuspender again;
  ASSERT_TRUE(again.SuspendAll()) << again.error();
  EXPECT_EQ(CountPresent(again.threads(), expected), expected.size());
  again.ResumeAll();
  EXPECT_EQ(again.regrown(), 0);
}

TEST(SignalSuspenderTest, SuspendedThreadsDoNotRun) {
  std::atomic<uint64_t> counter{0};
  std::atomic<bool> done{false};
  std::thread worker([&] {
    while (!done) counter.fetch_add(1, std::memory_order_relaxed);
  });
  while (counter.load() == 0) std::this_thread::yield();
  SignalSuspender suspender;
  ASSERT_TRUE(suspender.SuspendAll()) << suspender.error();
  const uint64_t before = counter.load();
  RawSyscall::Nanosleep(20 * 1000000L);
  const uint64_t after = counter.load();
  suspender.ResumeAll();
  EXPECT_EQ(before, after);
  EXPECT_TRUE(WaitUntil([&] { return counter.load() > after; }, std::chrono::seconds(2)));
  done = true;
  worker.join();
}

std::atomic<int> g_usr1_deliveries{0};
void CountUsr1(int) {
  g_usr1_deliveries.fetch_add(1);
}

TEST(SignalSuspenderTest, SignalSentDuringTheSuspensionIsDeliveredAfterResume) {
  struct sigaction action = {};
  action.sa_handler = &CountUsr1;
  sigaction(SIGUSR1, &action, nullptr);
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(1, 1));
  SignalSuspender suspender;
  ASSERT_TRUE(suspender.SuspendAll()) << suspender.error();
  for (const MagicThreads::Thread& m : magic.threads()) {
    RawSyscall::Tgkill(getpid(), m.tid.load(), SIGUSR1);
  }
  RawSyscall::Nanosleep(30 * 1000000L);
  const int during = g_usr1_deliveries.load();
  suspender.ResumeAll();
  EXPECT_EQ(during, 0);  // the handler blocks every signal while parked
  EXPECT_TRUE(WaitUntil([] { return g_usr1_deliveries.load() == 2; }, std::chrono::seconds(5)));
  signal(SIGUSR1, SIG_DFL);
}

TEST(SignalSuspenderTest, ThreadsStartingAndExitingDuringSuspendAllDoNotHangIt) {
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(2, 2));
  const std::vector<pid_t> expected = magic.Tids();
  testing::ThreadChurn churn(4);
  SignalSuspender suspender;
  int partial = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 50; ++round) {
    ASSERT_TRUE(suspender.SuspendAll()) << "round " << round << ": " << suspender.error();
    const size_t present = CountPresent(suspender.threads(), expected);
    for (const ThreadInfo& t : suspender.threads()) partial += t.registers_complete ? 0 : 1;
    suspender.ResumeAll();
    ASSERT_EQ(present, expected.size()) << "round " << round;
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  std::printf(
      "[ info ] 50 signal suspensions during churn (%d threads created): %lld ms, %d threads "
      "recorded as blocked sleepers\n",
      churn.created(), static_cast<long long>(ms), partial);
}

TEST(SignalSuspenderTest, OnlyOneSuspensionAtATime) {
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(0, 1));
  SignalSuspender first;
  SignalSuspender second;
  ASSERT_TRUE(first.SuspendAll()) << first.error();
  EXPECT_FALSE(first.SuspendAll());
  EXPECT_EQ(first.error(), "already suspended");
  EXPECT_FALSE(second.SuspendAll());
  EXPECT_EQ(second.error(), "another signal suspension is in progress");
  first.ResumeAll();
  EXPECT_TRUE(second.SuspendAll()) << second.error();
  second.ResumeAll();
}

TEST(SignalSuspenderTest, ForeignSignalsOnTheSameNumberAreIgnored) {
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(1, 1));
  SignalSuspender suspender;
  ASSERT_TRUE(suspender.SuspendAll());  // installs the handler
  suspender.ResumeAll();
  // A plain tgkill (not our rt_tgsigqueueinfo request) must neither suspend nor kill.
  for (const MagicThreads::Thread& m : magic.threads()) {
    EXPECT_EQ(RawSyscall::Tgkill(getpid(), m.tid.load(), suspender.signal()), 0);
  }
  RawSyscall::Nanosleep(20 * 1000000L);
  ASSERT_TRUE(suspender.SuspendAll()) << suspender.error();
  EXPECT_EQ(CountPresent(suspender.threads(), magic.Tids()), 2u);
  suspender.ResumeAll();
}

TEST(SignalSuspenderTest, HandlesAThousandIdleThreads) {
  MagicThreads magic;
  ASSERT_TRUE(magic.Start(0, 1000, 64 * 1024));
  const std::vector<pid_t> expected = magic.Tids();
  SignalSuspender suspender;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(suspender.SuspendAll()) << suspender.error();
  const auto t1 = std::chrono::steady_clock::now();
  const size_t present = CountPresent(suspender.threads(), expected);
  suspender.ResumeAll();
  const auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(present, 1000u);
  using std::chrono::microseconds;
  std::printf("[ info ] 1000 idle threads: SuspendAll %lld us, ResumeAll %lld us\n",
              static_cast<long long>(std::chrono::duration_cast<microseconds>(t1 - t0).count()),
              static_cast<long long>(std::chrono::duration_cast<microseconds>(t2 - t1).count()));
}

}  // namespace
}  // namespace heapgraph::roots
