// tests/heap/runtime: ExitCaller finds the frame that called exit() from an at-exit handler of a
// real (forked) process, and nothing outside exit().
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "heap/runtime/ExitCaller.h"

namespace heapgraph {
namespace {

uintptr_t g_caller_frame = 0;  // the frame address of CallExit, set just before exit()

void CheckAtExit() {
  const uint64_t sp = ExitCaller::StackPointer();
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  // exit's caller's stack pointer lies above this handler's frame and at most at the top of
  // CallExit's own frame (its return address and saved frame pointer above it).
  _exit(sp > here && sp <= g_caller_frame + 16 ? 0 : 1);
}

[[noreturn]] __attribute__((noinline)) void CallExit() {
  g_caller_frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  exit(3);
}

TEST(ExitCallerTest, OutsideExitThereIsNone) {
  EXPECT_EQ(ExitCaller::StackPointer(), 0u);
}

TEST(ExitCallerTest, AtExitHandlerFindsTheFrameThatCalledExit) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    atexit(&CheckAtExit);
    CallExit();
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);  // 1: wrong frame, 3: the handler never ran
}

}  // namespace
}  // namespace heapgraph
