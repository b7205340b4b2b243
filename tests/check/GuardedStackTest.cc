// tests/report: GuardedStack maps a usable stack with a PROT_NONE page below it, outside the
// recorder's mmap hook, and unmaps all of it when destroyed.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "check/GuardedStack.h"

namespace heapgraph::report {
namespace {

// Whether [address, address + bytes) is mapped (msync fails with ENOMEM on unmapped memory).
bool Mapped(void* address, size_t bytes) {
  return msync(address, bytes, MS_ASYNC) == 0 || errno != ENOMEM;
}

TEST(GuardedStackTest, WholeStackIsWritableAndTheGuardPageFaults) {
  GuardedStack stack(64 * 1024);
  ASSERT_TRUE(stack.valid());
  EXPECT_EQ(stack.size(), 64u * 1024);
  std::memset(stack.base(), 0x5a, stack.size());
  EXPECT_EQ(stack.base()[stack.size() - 1], 0x5a);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The default action, set past any sanitizer's interception of sigaction: the kernel's
    // struct with handler SIG_DFL, no flags and an empty mask is all zeros.
    uint64_t default_action[4] = {};
    syscall(SYS_rt_sigaction, SIGSEGV, default_action, nullptr, 8);
    stack.base()[-1] = 1;  // into the guard page
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}

TEST(GuardedStackTest, DestructionUnmapsTheStackAndTheGuard) {
  char* base = nullptr;
  {
    GuardedStack stack(16 * 4096);
    ASSERT_TRUE(stack.valid());
    base = stack.base();
    EXPECT_TRUE(Mapped(base - 4096, 17 * 4096));
  }
  EXPECT_FALSE(Mapped(base - 4096, 4096));
  EXPECT_FALSE(Mapped(base + 15 * 4096, 4096));
}

TEST(GuardedStackTest, AStackLeftToTheExitStaysMapped) {
  char* base = nullptr;
  {
    GuardedStack stack(16 * 4096);
    ASSERT_TRUE(stack.valid());
    base = stack.base();
    stack.LeaveToExit();
  }
  EXPECT_TRUE(Mapped(base - 4096, 17 * 4096));
  munmap(base - 4096, 17 * 4096);
}

TEST(GuardedStackTest, AnImpossibleSizeIsInvalidNotACrash) {
  GuardedStack stack(size_t{1} << 62);
  EXPECT_FALSE(stack.valid());
}

}  // namespace
}  // namespace heapgraph::report
