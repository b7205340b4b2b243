#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
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

}  // namespace
}  // namespace heapgraph::roots
