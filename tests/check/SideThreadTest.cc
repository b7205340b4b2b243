// tests/report: SideThread runs its body on another thread whose stack is unmapped when joined,
// and hands back what the body threw.
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

#include "check/SideThread.h"

namespace heapgraph::report {
namespace {

bool Mapped(uintptr_t address) {
  void* page = reinterpret_cast<void*>(address & ~uintptr_t{4095});
  return msync(page, 4096, MS_ASYNC) == 0 || errno != ENOMEM;
}

TEST(SideThreadTest, RunsOnAnotherThreadWhoseStackIsUnmappedAtJoin) {
  long caller = syscall(SYS_gettid), runner = 0;
  uintptr_t frame = 0;
  bool mapped_while_running = false;
  SideThread thread;
  ASSERT_TRUE(thread.Start([&] {
    runner = syscall(SYS_gettid);
    frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    mapped_while_running = Mapped(frame);
  }));
  EXPECT_TRUE(thread.running());
  EXPECT_FALSE(thread.Start([] {}));  // one body at a time
  thread.Join();
  EXPECT_FALSE(thread.running());
  EXPECT_NE(runner, 0);
  EXPECT_NE(runner, caller);
  EXPECT_TRUE(mapped_while_running);
  EXPECT_FALSE(Mapped(frame));
  EXPECT_EQ(thread.error(), nullptr);
  thread.Join();  // no-op
}

TEST(SideThreadTest, HandsBackWhatTheBodyThrewAndRunsAgain) {
  SideThread thread;
  ASSERT_TRUE(thread.Start([] { throw std::runtime_error("body failed"); }));
  thread.Join();
  ASSERT_NE(thread.error(), nullptr);
  EXPECT_THROW(std::rethrow_exception(thread.error()), std::runtime_error);
  int runs = 0;
  ASSERT_TRUE(thread.Start([&] { ++runs; }));
  thread.Join();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(thread.error(), nullptr);
}

TEST(SideThreadTest, DestructorJoins) {
  int runs = 0;
  {
    SideThread thread;
    ASSERT_TRUE(thread.Start([&] {
      usleep(1000);
      ++runs;
    }));
  }
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace heapgraph::report
