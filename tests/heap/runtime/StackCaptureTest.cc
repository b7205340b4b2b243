// tests/heap: StackCapture's rule walk against libunwind's unw_backtrace from the same frame, on
// the main thread, on other threads (through libstdc++'s std::function and glibc's thread start),
// through a frame kept by rbp, after ForgetRuleWalkRules, and with many threads filling the rule
// cache at once: the frames below the caller are the same return addresses. The same for the
// complete walk (DwarfWalk), which takes a capture from a signal handler (the rule walk stops at
// the signal frame) and every capture with the rule walk off. A forked child reports the rules it
// read (ForkChildHints); its parent learns them (LearnRule) and the next child misses none.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <gtest/gtest.h>
#include <libunwind.h>

#include <functional>
#include <thread>
#include <vector>

#include "heap/runtime/ForkChildHints.h"
#include "heap/runtime/StackCapture.h"
#include "heap/runtime/WalkMemo.h"
#include "tests/CallChain.h"

namespace heapgraph {
namespace {

constexpr uint32_t kDepth = 64;
// The memo CaptureBoth passes (null: none); a thread's own, in static TLS like the recorder's.
WalkMemo* capture_memo = nullptr;
thread_local WalkMemo capture_test_memo;

struct Both {
  std::vector<uintptr_t> captured;
  std::vector<uintptr_t> libunwind;
};

// Both unwinders from one frame: Capture's first frame is the return address into this function;
// libunwind's list holds it too (after its own frames, if any).
__attribute__((noinline)) Both CaptureBoth() {
  uintptr_t frames[kDepth + StackCapture::kMaxOwnFrames];
  uint32_t n = StackCapture::Capture(frames, kDepth, capture_memo);
  void* reference[kDepth + 8];
  int m = unw_backtrace(reference, kDepth + 8);
  asm volatile("" ::: "memory");
  Both both;
  both.captured.assign(frames, frames + n);
  for (int i = 0; i < m; ++i) both.libunwind.push_back(reinterpret_cast<uintptr_t>(reference[i]));
  return both;
}

// The frames above CaptureBoth: from each list's first frame after the one inside CaptureBoth.
void ExpectSameCallers(const Both& both) {
  ASSERT_GE(both.captured.size(), 2u);
  const std::vector<uintptr_t>& ref = both.libunwind;
  size_t start = 0;
  while (start < ref.size() && ref[start] != both.captured[1]) ++start;
  ASSERT_LT(start, ref.size()) << "libunwind lacks the caller's return address";
  std::vector<uintptr_t> expected(ref.begin() + start, ref.end());
  std::vector<uintptr_t> got(both.captured.begin() + 1, both.captured.end());
  EXPECT_EQ(got, expected);
}

Both Chain(int depth) {
  return testing_chain::Chain<&CaptureBoth>(depth);
}

Both ThroughAlloca(int n) {
  return testing_chain::ThroughAlloca<&CaptureBoth>(n);
}

class StackCaptureTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    StackCapture::Initialize(true);
    StackCapture::SetOwnCode(0, 0);
  }
};

// With the thread's memo (WalkMemo): repeated and changing stacks, then a walk entered while
// another is in progress (as in a signal handler), which must neither use nor change the memo.
TEST_F(StackCaptureTest, MemoWalkGivesLibunwindsFrames) {
  capture_memo = &capture_test_memo;
  for (int round = 0; round < 3; ++round) {
    for (int depth : {0, 5, 20, 5, 5, 0}) ExpectSameCallers(Chain(depth));
  }
  ASSERT_TRUE(capture_test_memo.Enter());
  ExpectSameCallers(Chain(7));
  capture_test_memo.Leave();
  ExpectSameCallers(Chain(5));
  capture_memo = nullptr;
}

TEST_F(StackCaptureTest, RuleWalkGivesLibunwindsFrames) {
  for (int depth : {0, 5, 20}) ExpectSameCallers(Chain(depth));
  ExpectSameCallers(ThroughAlloca(40));
}

TEST_F(StackCaptureTest, FramesAgreeAfterTheRulesAreForgotten) {
  ExpectSameCallers(Chain(4));
  StackCapture::ForgetRuleWalkRules();
  ExpectSameCallers(Chain(4));
}

TEST_F(StackCaptureTest, ThreadsThroughLibstdcxxGetLibunwindsFrames) {
  std::vector<Both> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&results, t] {
      std::function<Both()> call = [t] { return Chain(t * 3); };
      for (int i = 0; i < 200; ++i) results[t] = call();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Both& both : results) ExpectSameCallers(both);
}

Both in_handler;

void CaptureInHandler(int) {
  in_handler = Chain(3);
}

// Interrupted inside libc (raise's system call): the walk crosses glibc's signal frame.
TEST_F(StackCaptureTest, ASignalHandlersCaptureGetsLibunwindsFrames) {
  struct sigaction action {};
  action.sa_handler = CaptureInHandler;
  ASSERT_EQ(sigaction(SIGUSR2, &action, nullptr), 0);
  for (int i = 0; i < 3; ++i) {
    in_handler = {};
    raise(SIGUSR2);
    ExpectSameCallers(in_handler);
    EXPECT_GT(in_handler.captured.size(), 8u);  // beyond the handler: raise, this test, main
  }
  signal(SIGUSR2, SIG_DFL);
}

TEST_F(StackCaptureTest, TheCompleteWalkForEveryStackGivesLibunwindsFrames) {
  StackCapture::Initialize(/*unwind_by_rules=*/false);
  for (int depth : {0, 5, 20}) ExpectSameCallers(Chain(depth));
  ExpectSameCallers(ThroughAlloca(40));
  std::thread thread([] {
    std::function<Both()> call = [] { return Chain(4); };
    ExpectSameCallers(call());
  });
  thread.join();
  StackCapture::Initialize(true);
}

// Only the forked children below call it: no walk of the parent's passed its frames.
__attribute__((noinline)) uint32_t CaptureInAChild() {
  uintptr_t frames[kDepth + StackCapture::kMaxOwnFrames];
  uint32_t n = StackCapture::Capture(frames, kDepth);
  asm volatile("" ::: "memory");
  return n;
}

// Captures in a forked child that reports its misses to `hints`; true when it reported any.
bool ChildMissed(ForkChildHints& hints) {
  pid_t child = fork();
  if (child == 0) {
    hints.StartReporting();
    StackCapture::ReportMissesTo(&hints);
    const uint64_t before = hints.reported();
    const uint32_t n = CaptureInAChild();
    _exit(n < 3 ? 2 : hints.reported() != before ? 1 : 0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 2) << "the child's capture failed";
  return WEXITSTATUS(status) == 1;
}

// Both children fork from one call site, so that their stacks are the same return addresses.
TEST_F(StackCaptureTest, AForkedChildsMissesAreLearnedSoTheNextChildMissesNone) {
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  std::vector<uintptr_t> reported;
  bool missed[2] = {};
  for (int child = 0; child < 2; ++child) {
    missed[child] = ChildMissed(hints);
    hints.Drain([&](ForkChildHints::Kind kind, uint64_t value) {
      EXPECT_EQ(kind, ForkChildHints::kRule);
      reported.push_back(value);
      EXPECT_TRUE(StackCapture::LearnRule(value)) << "no rule learned for " << std::hex << value;
    });
  }
  EXPECT_TRUE(missed[0]);
  EXPECT_GE(reported.size(), 2u);  // at least CaptureInAChild's call of Capture and its caller's
  EXPECT_FALSE(missed[1]);
  for (uintptr_t value : reported) EXPECT_FALSE(StackCapture::LearnRule(value));  // cached now
}

// A hint outside every loaded object (a child's JIT code) is never kept.
TEST_F(StackCaptureTest, NoRuleIsLearnedWhereNoObjectIsLoaded) {
  EXPECT_FALSE(StackCapture::LearnRule(0x1000));
  EXPECT_FALSE(StackCapture::LearnRule(0x1000));
}

TEST_F(StackCaptureTest, DepthLimitTruncates) {
  uintptr_t frames[3 + StackCapture::kMaxOwnFrames];
  uint32_t n = StackCapture::Capture(frames, 3);
  EXPECT_EQ(n, 3u);
}

}  // namespace
}  // namespace heapgraph
