// tests/heap: ProcessBarrier (membarrier(2)) on this kernel, and the contract it exists for: one
// thread stores x and loads y behind a compiler barrier only, another stores y, issues the
// barrier and loads x; on real threads at once they never both miss the other's store (without the
// barrier, x86's store buffers let both loads see 0). A forked child inherits the registration.
#include <gtest/gtest.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "heap/platform/ProcessBarrier.h"

namespace heapgraph {
namespace {

TEST(ProcessBarrierTest, RegistersAndIssues) {
  ASSERT_TRUE(ProcessBarrier::Register()) << "membarrier(2) expedited is refused here";
  EXPECT_TRUE(ProcessBarrier::Available());
  ProcessBarrier::Issue();
}

// The recorder's fork handler does not register its child again (two system calls and a page
// written in every child of a shell): the kernel copies the registration with the address space.
TEST(ProcessBarrierTest, AForkedChildInheritsTheRegistration) {
  ASSERT_TRUE(ProcessBarrier::Register());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : 1);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the child's barrier was refused: not inherited";
}

TEST(ProcessBarrierTest, TheAsymmetricStoreBufferingPatternNeverLosesBothStores) {
  ASSERT_TRUE(ProcessBarrier::Register());
  constexpr int kRounds = 5000;
  std::atomic<int> x{0}, y{0};
  std::atomic<int> go{0}, arrived{0};
  int r1[kRounds], r2[kRounds];
  std::thread fast([&] {
    for (int round = 1; round <= kRounds; ++round) {
      while (go.load(std::memory_order_acquire) < round) {
      }
      x.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      r1[round - 1] = y.load(std::memory_order_relaxed);
      arrived.fetch_add(1, std::memory_order_acq_rel);
    }
  });
  for (int round = 1; round <= kRounds; ++round) {
    x.store(0);
    y.store(0);
    go.store(round, std::memory_order_release);
    y.store(1, std::memory_order_relaxed);
    ProcessBarrier::Issue();
    r2[round - 1] = x.load(std::memory_order_relaxed);
    while (arrived.load(std::memory_order_acquire) < round) std::this_thread::yield();
  }
  fast.join();
  int both_missed = 0;
  for (int i = 0; i < kRounds; ++i) both_missed += r1[i] == 0 && r2[i] == 0;
  EXPECT_EQ(0, both_missed) << "of " << kRounds << " rounds";
}

}  // namespace
}  // namespace heapgraph
