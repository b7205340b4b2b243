#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "roots/RawSyscall.h"

namespace heapgraph::roots {
namespace {

TEST(RawSyscallTest, ReturnsTheKernelsValues) {
  EXPECT_EQ(RawSyscall::Gettid(), static_cast<pid_t>(syscall(SYS_gettid)));
  EXPECT_EQ(RawSyscall::Getpid(), getpid());
  EXPECT_EQ(RawSyscall::Getppid(), getppid());
}

TEST(RawSyscallTest, ReportsErrorsAsNegativeErrnoAndLeavesErrnoAlone) {
  errno = 1234;
  EXPECT_EQ(RawSyscall::Close(-1), -EBADF);
  EXPECT_EQ(RawSyscall::Open("/nonexistent/heapgraph", O_RDONLY), -ENOENT);
  EXPECT_EQ(RawSyscall::Tgkill(getpid(), 0x3fffffff, 0), -ESRCH);
  EXPECT_EQ(errno, 1234);
  EXPECT_TRUE(RawSyscall::Failed(-EBADF));
  EXPECT_FALSE(RawSyscall::Failed(0));
  EXPECT_FALSE(RawSyscall::Failed(-5000));  // not an errno: e.g. a large unsigned result
}

TEST(RawSyscallTest, ReadsFiles) {
  const long fd = RawSyscall::Open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char buffer[64] = {};
  EXPECT_GT(RawSyscall::Read(static_cast<int>(fd), buffer, sizeof(buffer) - 1), 0);
  EXPECT_EQ(RawSyscall::Close(static_cast<int>(fd)), 0);
  EXPECT_EQ(std::atol(buffer), getpid());
}

TEST(RawSyscallTest, FutexWaitTimesOutAndWakes) {
  std::atomic<uint32_t> word{0};
  const timespec short_timeout{0, 1000000};
  EXPECT_EQ(RawSyscall::FutexWait(&word, 0, &short_timeout), -ETIMEDOUT);
  EXPECT_EQ(RawSyscall::FutexWait(&word, 1, &short_timeout), -EAGAIN);  // value differs
  std::thread waker([&] {
    RawSyscall::Nanosleep(5000000);
    word.store(1);
    RawSyscall::FutexWake(&word, 1);
  });
  while (word.load() == 0) RawSyscall::FutexWait(&word, 0, nullptr);
  waker.join();
  EXPECT_EQ(word.load(), 1u);
}

// A fork-like clone with exit signal 0: the child writes its own copy, sets its mask and exits
// through ExitGroup; only a __WALL wait sees it (it is not a SIGCHLD child).
TEST(RawSyscallTest, CloneProcessWithExitSignalZeroGivesAChildWithItsOwnMemory) {
  volatile int copied = 1;
  const long pid = RawSyscall::CloneProcess(0);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    copied = 2;
    const uint64_t mask = uint64_t{1} << (SIGUSR2 - 1);
    if (RawSyscall::SetSignalMask(&mask) != 0) RawSyscall::ExitGroup(10);
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, nullptr, &now);
    if (sigismember(&now, SIGUSR2) != 1 || sigismember(&now, SIGUSR1) != 0) {
      RawSyscall::ExitGroup(11);
    }
    RawSyscall::ExitGroup(copied == 2 ? 42 : 12);
  }
  int status = 0;
  EXPECT_EQ(waitpid(static_cast<pid_t>(pid), &status, WNOHANG), -1);  // not a SIGCHLD child
  EXPECT_EQ(errno, ECHILD);
  ASSERT_EQ(waitpid(static_cast<pid_t>(pid), &status, __WALL), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 42);
  EXPECT_EQ(copied, 1);
}

}  // namespace
}  // namespace heapgraph::roots
