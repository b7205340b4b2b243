// tests/heap/runtime: ExitCaller finds the frame that called exit() from an at-exit handler of a
// real (forked) process, on the main thread (the stack search) and on another (DwarfWalk), takes a
// noted call on its thread only, and finds nothing outside exit().
#include <gtest/gtest.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <thread>

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

// exit() from a thread other than main: the stack search is for the main thread's stack only, so
// the complete walk climbs.
TEST(ExitCallerTest, AtExitHandlerOnAnotherThreadFindsTheFrameThatCalledExit) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    atexit(&CheckAtExit);
    pthread_t thread;
    pthread_create(
        &thread, nullptr, [](void*) -> void* { CallExit(); }, nullptr);
    pthread_join(thread, nullptr);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);  // 1: wrong frame, 3: the handler never ran
}

// What the recorder's exit() wrapper noted is the answer on its thread, and only there.
TEST(ExitCallerTest, ANotedCallIsTheCallingThreadsOnly) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ExitCaller::NoteCall(0x7000);
    uint64_t other = 1;
    std::thread([&other] { other = ExitCaller::StackPointer(); }).join();
    _exit(ExitCaller::StackPointer() == 0x7000 && other == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
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
