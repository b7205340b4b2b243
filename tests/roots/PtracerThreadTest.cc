#include <elf.h>
#include <gtest/gtest.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "roots/PtracerThread.h"
#include "roots/RawSyscall.h"
#include "roots/TaskList.h"

namespace heapgraph::roots {
namespace {

struct Probe {
  pid_t tid = 0;
  pid_t parent = 0;
  pid_t group = 0;
  int written = 0;
};

int RecordIdentity(void* argument) {
  auto* probe = static_cast<Probe*>(argument);
  probe->tid = RawSyscall::Gettid();
  probe->parent = RawSyscall::Getppid();
  probe->group = RawSyscall::Getpid();
  probe->written = 1;  // shared memory: CLONE_VM
  return 7;
}

TEST(PtracerThreadTest, RunsTheBodyInASeparateThreadGroupSharingMemory) {
  Probe probe;
  PtracerThread helper;
  ASSERT_TRUE(helper.Start(&RecordIdentity, &probe)) << helper.error();
  EXPECT_GT(helper.tid(), 0);
  EXPECT_EQ(helper.Join(), 7);
  EXPECT_EQ(probe.written, 1);
  EXPECT_EQ(probe.tid, helper.tid());
  EXPECT_EQ(probe.group, helper.tid());  // its own thread group
  EXPECT_EQ(probe.parent, getpid());
  EXPECT_TRUE(helper.Exited());
}

int WaitForFlag(void* argument) {
  auto* flag = static_cast<std::atomic<uint32_t>*>(argument);
  while (flag->load() == 0) RawSyscall::FutexWait(flag, 0, nullptr);
  return 0;
}

TEST(PtracerThreadTest, IsNotListedAmongTheProcessThreadsAndCanBePolled) {
  std::atomic<uint32_t> flag{0};
  PtracerThread helper;
  ASSERT_TRUE(helper.Start(&WaitForFlag, &flag));
  EXPECT_FALSE(helper.Exited());
  EXPECT_TRUE(helper.Running());
  std::vector<pid_t> tids(256);
  std::vector<char> dirents(4096);
  const long n = TaskList().Read(tids, dirents);
  ASSERT_GT(n, 0);
  for (long i = 0; i < n; ++i) EXPECT_NE(tids[static_cast<size_t>(i)], helper.tid());
  flag.store(1);
  RawSyscall::FutexWake(&flag, 1);
  EXPECT_EQ(helper.Join(), 0);
  EXPECT_EQ(helper.Join(), 0);  // idempotent
  EXPECT_FALSE(helper.Running());
}

// Running() turns false at the helper's exit, before anyone reaps it: another task can wait for
// it on the word.
TEST(PtracerThreadTest, RunningWordIsClearedAtExitWithoutReaping) {
  PtracerThread helper;
  EXPECT_FALSE(helper.Running());
  std::atomic<uint32_t> flag{1};
  ASSERT_TRUE(helper.Start(&WaitForFlag, &flag));
  while (helper.Running()) RawSyscall::FutexWaitShared(helper.running_word(), 1, nullptr);
  EXPECT_EQ(helper.Join(), 0);
}

struct TraceTarget {
  pid_t tid = 0;
  uint64_t stack_pointer = 0;
};

// Seizes, interrupts, reads NT_PRSTATUS and detaches: what ThreadCapture builds on.
int TraceOneThread(void* argument) {
  auto* target = static_cast<TraceTarget*>(argument);
  if (RawSyscall::Ptrace(PTRACE_SEIZE, target->tid, 0, 0) < 0) return 1;
  if (RawSyscall::Ptrace(PTRACE_INTERRUPT, target->tid, 0, 0) < 0) return 2;
  int status = 0;
  if (RawSyscall::Wait4(target->tid, &status, __WALL) != target->tid) return 3;
  if (!WIFSTOPPED(status)) return 4;
  user_regs_struct regs{};
  iovec io{&regs, sizeof(regs)};
  if (RawSyscall::Ptrace(PTRACE_GETREGSET, target->tid, NT_PRSTATUS,
                         reinterpret_cast<uintptr_t>(&io)) < 0) {
    return 5;
  }
#if defined(__x86_64__)
  target->stack_pointer = regs.rsp;
#endif
  return RawSyscall::Ptrace(PTRACE_DETACH, target->tid, 0, 0) < 0 ? 6 : 0;
}

TEST(PtracerThreadTest, MayPtraceThreadsOfThisProcess) {
  std::atomic<bool> done{false};
  TraceTarget target;
  std::atomic<pid_t> tid{0};
  std::thread thread([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (!done) RawSyscall::Nanosleep(1000000);
  });
  while (tid == 0) std::this_thread::yield();
  target.tid = tid;
  PtracerThread helper;
  ASSERT_TRUE(helper.Start(&TraceOneThread, &target));
  EXPECT_EQ(helper.Join(), 0);
  done = true;
  thread.join();
#if defined(__x86_64__)
  EXPECT_NE(target.stack_pointer, 0u);
#endif
}

int KillSelf(void*) {
  RawSyscall::Tgkill(RawSyscall::Getpid(), RawSyscall::Gettid(), SIGKILL);
  return 0;
}

TEST(PtracerThreadTest, ReportsAHelperKilledBySignal) {
  PtracerThread helper;
  ASSERT_TRUE(helper.Start(&KillSelf, nullptr));
  EXPECT_EQ(helper.Join(), 128 + SIGKILL);  // only the helper's thread group dies
}

}  // namespace
}  // namespace heapgraph::roots
