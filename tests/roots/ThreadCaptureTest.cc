#include <gtest/gtest.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "heap/runtime/UnwinderMappings.h"
#include "roots/ProcessMappings.h"
#include "roots/RawSyscall.h"
#include "roots/TaskList.h"
#include "roots/ThreadCapture.h"
#include "roots/VectorState.h"
#include "tests/roots/MagicThreads.h"
#include "tests/roots/RegisterWord.h"
#include "tests/roots/ThreadChurn.h"

namespace heapgraph::roots {
namespace {

using testing::MagicThreads;
using testing::ThreadChurn;

const ThreadInfo* FindTid(std::span<const ThreadInfo> threads, pid_t tid) {
  const ThreadInfo* found = nullptr;
  for (const ThreadInfo& t : threads) {
    if (t.tid == tid) {
      if (found != nullptr) return nullptr;  // duplicates are a failure too
      found = &t;
    }
  }
  return found;
}

// Counts only tids in `expected` (no allocation: usable while the world is stopped).
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

// Checks what both stop mechanisms must deliver; threads() stays readable after ReleaseAll().
void ExpectMagicFound(std::span<const ThreadInfo> threads, const MagicThreads& magic) {
  ProcessMappings maps;
  ASSERT_TRUE(maps.Read());
  ASSERT_FALSE(threads.empty());
  EXPECT_TRUE(threads[0].is_caller);
  EXPECT_EQ(threads[0].tid, static_cast<pid_t>(syscall(SYS_gettid)));
  for (const MagicThreads::Thread& m : magic.threads()) {
    const ThreadInfo* t = FindTid(threads, m.tid.load());
    ASSERT_NE(t, nullptr) << "tid " << m.tid.load() << " missing or duplicated";
    EXPECT_FALSE(t->is_caller);
    const ProcessMappings::Mapping* stack = maps.Find(t->stack_pointer);
    ASSERT_NE(stack, nullptr) << "SP outside every mapping";
    EXPECT_TRUE(stack->writable);
    if (m.spinning) {
#if defined(__x86_64__)
      EXPECT_EQ(t->regs[ThreadInfo::kRbx], m.rbx_magic);
      EXPECT_EQ(t->regs[ThreadInfo::kR12], m.r12_magic);
#else
      EXPECT_EQ(t->regs[19], m.rbx_magic);
      EXPECT_EQ(t->regs[20], m.r12_magic);
#endif
      EXPECT_EQ(FirstWord(VectorState(t->vector_bytes).Xmm(7)), m.xmm_magic);
      EXPECT_TRUE(VectorState(t->vector_bytes).ContainsWord(m.xmm_magic));
    } else {
      // The blocked thread's local lies in the same mapping, above SP.
      EXPECT_TRUE(stack->Contains(m.local_address.load()));
      EXPECT_GE(m.local_address.load(), t->stack_pointer);
    }
  }
}

class ThreadCaptureTest : public ::testing::Test {
 protected:
  MagicThreads magic_;
};

TEST_F(ThreadCaptureTest, StopsEveryThreadAndRecordsRegisters) {
  ASSERT_TRUE(magic_.Start(8, 8));
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  EXPECT_TRUE(capture.stopped());
  EXPECT_EQ(capture.method_used(), ThreadCapture::Method::kPtrace);
  capture.ReleaseAll();
  EXPECT_FALSE(capture.stopped());
  EXPECT_TRUE(capture.notice().empty());
  EXPECT_GE(capture.threads().size(), 17u);
  EXPECT_GE(capture.stats().passes, 2);
  EXPECT_GT(capture.stats().threads_stopped_ms, 0);
  ExpectMagicFound(capture.threads(), magic_);
  for (const ThreadInfo& t : capture.threads()) EXPECT_EQ(t.pending_signal, 0);
}

// The buffers a leak scan excludes from its roots: what StopAll() prepared, disjoint from the
// capture arena that holds the threads (with two helpers, so that both stacks are mapped).
TEST_F(ThreadCaptureTest, BufferRangesCoverThePreparedBuffersOnly) {
  ThreadCapture::Options options;
  options.helpers = 2;
  ThreadCapture capture(options);
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  capture.ReleaseAll();
  auto threads = reinterpret_cast<uint64_t>(capture.threads().data());
  for (auto [begin, end] : capture.BufferRanges()) {
    EXPECT_LT(begin, end);
    EXPECT_FALSE(threads >= begin && threads < end);
  }
  auto seen = capture.BufferRanges()[3];
  EXPECT_GT(seen.second - seen.first, static_cast<uint64_t>(TaskList::PidMax()));
}

TEST_F(ThreadCaptureTest, StopAllTwiceFailsAndReleaseIsIdempotent) {
  ASSERT_TRUE(magic_.Start(1, 1));
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  EXPECT_FALSE(capture.StopAll());
  EXPECT_EQ(capture.error(), "the world is already stopped");
  capture.ReleaseAll();
  capture.ReleaseAll();
  ASSERT_TRUE(capture.StopAll()) << capture.error();  // reusable
  capture.ReleaseAll();
}

TEST_F(ThreadCaptureTest, StoppedThreadsDoNotRun) {
  std::atomic<uint64_t> counter{0};
  std::atomic<bool> done{false};
  std::thread worker([&] {
    while (!done) counter.fetch_add(1, std::memory_order_relaxed);
  });
  while (counter.load() == 0) std::this_thread::yield();
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  const uint64_t before = counter.load();
  RawSyscall::Nanosleep(20 * 1000000L);
  const uint64_t after = counter.load();
  capture.ReleaseAll();
  EXPECT_EQ(before, after);
  EXPECT_TRUE(WaitUntil([&] { return counter.load() > after; }, std::chrono::seconds(2)));
  done = true;
  worker.join();
}

#if defined(__x86_64__)
// Spins with a magic value in all of zmm7 (so also in the upper halves of ymm7 and zmm7), in
// zmm20 and in k1. The target attribute lets the asm name AVX-512 registers.
__attribute__((target("avx512f,avx512bw"))) void SpinWithAvx512(uint64_t magic,
                                                                std::atomic<uint32_t>* ready,
                                                                const std::atomic<uint32_t>* stop) {
  __asm__ volatile(
      "vpbroadcastq %[m], %%zmm7\n\t"
      "vpbroadcastq %[m], %%zmm20\n\t"
      "kmovq %[m], %%k1\n\t"
      "movl $1, (%[ready])\n\t"
      "1: pause\n\t"
      "cmpl $0, (%[stop])\n\t"
      "je 1b\n\t"
      "vzeroupper\n\t"
      :
      : [m] "r"(magic), [ready] "r"(ready), [stop] "r"(stop)
      : "xmm7", "xmm20", "k1", "memory", "cc");
}

// Spins with a magic value in all four quadwords of ymm7.
__attribute__((target("avx2"))) void SpinWithAvx2(uint64_t magic, std::atomic<uint32_t>* ready,
                                                  const std::atomic<uint32_t>* stop) {
  __asm__ volatile(
      "vmovq %[m], %%xmm7\n\t"
      "vpbroadcastq %%xmm7, %%ymm7\n\t"
      "movl $1, (%[ready])\n\t"
      "1: pause\n\t"
      "cmpl $0, (%[stop])\n\t"
      "je 1b\n\t"
      "vzeroupper\n\t"
      :
      : [m] "r"(magic), [ready] "r"(ready), [stop] "r"(stop)
      : "xmm7", "memory", "cc");
}

TEST_F(ThreadCaptureTest, RecordsYmmAndZmmUpperHalves) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2";
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      VectorState::Layout(VectorState::kHi16Zmm).size != 0;
  constexpr uint64_t kMagic = 0x5eed0000a5a5f00d;
  std::atomic<uint32_t> ready{0}, stop{0};
  std::atomic<pid_t> tid{0};
  std::thread spinner([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (avx512) {
      SpinWithAvx512(kMagic, &ready, &stop);
    } else {
      SpinWithAvx2(kMagic, &ready, &stop);
    }
  });
  while (ready.load() == 0) std::this_thread::yield();
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  capture.ReleaseAll();
  stop = 1;
  spinner.join();
  const ThreadInfo* t = FindTid(capture.threads(), tid.load());
  ASSERT_NE(t, nullptr);
  const VectorState state(t->vector_bytes);
  EXPECT_EQ(FirstWord(state.Xmm(7)), kMagic);
  EXPECT_EQ(FirstWord(state.YmmUpper(7)), kMagic);
  if (!avx512) return;
  EXPECT_EQ(FirstWord(state.ZmmUpper(7)), kMagic);
  EXPECT_EQ(FirstWord(state.HighZmm(20)), kMagic);
  EXPECT_EQ(FirstWord(state.Opmask(1)), kMagic);
}
#endif

std::atomic<int> g_usr1_deliveries{0};

void CountUsr1(int) {
  g_usr1_deliveries.fetch_add(1);
}

class ScopedUsr1Counter {
 public:
  ScopedUsr1Counter() {
    g_usr1_deliveries = 0;
    struct sigaction action = {};
    action.sa_handler = &CountUsr1;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &action, &previous_);
  }
  ~ScopedUsr1Counter() { sigaction(SIGUSR1, &previous_, nullptr); }

 private:
  struct sigaction previous_ = {};
};

TEST_F(ThreadCaptureTest, SignalSentDuringTheStopIsDeliveredAfterRelease) {
  ScopedUsr1Counter counter;
  ASSERT_TRUE(magic_.Start(1, 1));
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  for (const MagicThreads::Thread& m : magic_.threads()) {
    RawSyscall::Tgkill(getpid(), m.tid.load(), SIGUSR1);
  }
  RawSyscall::Nanosleep(30 * 1000000L);
  const int during_stop = g_usr1_deliveries.load();
  capture.ReleaseAll();
  EXPECT_EQ(during_stop, 0);
  EXPECT_TRUE(WaitUntil([] { return g_usr1_deliveries.load() == 2; }, std::chrono::seconds(5)))
      << g_usr1_deliveries.load();
}

std::atomic<int> g_rt_deliveries{0};

void CountRt(int) {
  g_rt_deliveries.fetch_add(1);
}

// A sender thread keeps queueing a real-time signal (queued, never merged) to the magic threads
// while the world is stopped and released again and again. Signals that a thread dequeues while
// being attached come back as ThreadInfo::pending_signal and must be re-delivered on detach:
// in the end every signal sent has been delivered.
TEST_F(ThreadCaptureTest, SignalsRacingTheAttachAreNotLost) {
  const int rt_signal = SIGRTMIN + 2;
  struct sigaction action = {};
  action.sa_handler = &CountRt;
  action.sa_flags = SA_RESTART;
  ASSERT_EQ(sigaction(rt_signal, &action, nullptr), 0);
  ASSERT_TRUE(magic_.Start(4, 4));
  const std::vector<pid_t> targets = magic_.Tids();
  std::atomic<int> sent{0};
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    for (size_t i = 0; !stop; ++i) {
      if (sent.load() - g_rt_deliveries.load() >= 64) continue;  // stay far below RLIMIT_SIGPENDING
      if (RawSyscall::Tgkill(getpid(), targets[i % targets.size()], rt_signal) == 0) ++sent;
    }
  });
  int handed_back = 0;
  for (int round = 0; round < 40; ++round) {
    ThreadCapture capture;
    ASSERT_TRUE(capture.StopAll()) << capture.error();
    capture.ReleaseAll();
    for (const ThreadInfo& t : capture.threads()) handed_back += t.pending_signal == rt_signal;
  }
  stop = true;
  sender.join();
  EXPECT_TRUE(
      WaitUntil([&] { return g_rt_deliveries.load() == sent.load(); }, std::chrono::seconds(5)))
      << g_rt_deliveries.load() << " of " << sent.load();
  std::printf("[ info ] %d signals sent during 40 stops, %d taken during attach and handed back\n",
              sent.load(), handed_back);
  signal(rt_signal, SIG_DFL);
}

// Sends SIGUSR1 to the thread just seized and gives it time to dequeue it: the thread then
// reports a signal-delivery-stop before our interrupt, which must come back on detach.
// Runs in the helper task, whose getpid() is its own: the process comes with the argument.
struct SeizeTarget {
  TaskList tasks;
  pid_t tid;
};

void SignalRightAfterSeize(pid_t tid, void* argument) {
  const auto* target = static_cast<const SeizeTarget*>(argument);
  if (tid != target->tid) return;
  RawSyscall::Tgkill(target->tasks.pid(), tid, SIGUSR1);
  // Wait (up to 2 s) for the signal-delivery-stop: the thread shows 't' (tracing stop).
  for (int i = 0; i < 2000 && target->tasks.ThreadState(tid) != 't'; ++i) {
    RawSyscall::Nanosleep(1000000L);
  }
}

TEST_F(ThreadCaptureTest, SignalDequeuedWhileBeingAttachedIsHandedBack) {
  ScopedUsr1Counter counter;
  ASSERT_TRUE(magic_.Start(1, 1));
  for (const MagicThreads::Thread& m : magic_.threads()) {
    SeizeTarget target{TaskList(getpid()), m.tid.load()};
    g_usr1_deliveries = 0;
    ThreadCapture::Options options;
    options.after_seize_for_testing = &SignalRightAfterSeize;
    options.after_seize_argument = &target;
    ThreadCapture capture(options);
    ASSERT_TRUE(capture.StopAll()) << capture.error();
    RawSyscall::Nanosleep(10 * 1000000L);
    const int during_stop = g_usr1_deliveries.load();
    capture.ReleaseAll();
    const ThreadInfo* t = FindTid(capture.threads(), target.tid);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->pending_signal, SIGUSR1) << (m.spinning ? "spinning" : "blocking");
#if defined(__x86_64__)
    if (m.spinning) {
      EXPECT_EQ(t->regs[ThreadInfo::kRbx], m.rbx_magic);  // read in signal-delivery-stop
    }
#endif
    EXPECT_EQ(during_stop, 0);
    EXPECT_TRUE(WaitUntil([] { return g_usr1_deliveries.load() == 1; }, std::chrono::seconds(5)));
  }
}

TEST_F(ThreadCaptureTest, ThreadsStartingAndExitingDuringStopAllDoNotHangIt) {
  ASSERT_TRUE(magic_.Start(2, 2));
  const std::vector<pid_t> expected = magic_.Tids();
  ThreadChurn churn(4);
  int exited = 0;
  int max_passes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 50; ++round) {
    ThreadCapture::Options options;
    options.helpers = 1 + round % 2;  // one helper, then two attaching in parallel
    ThreadCapture capture(options);
    ASSERT_TRUE(capture.StopAll()) << "round " << round << ": " << capture.error();
    const size_t present = CountPresent(capture.threads(), expected);
    capture.ReleaseAll();
    ASSERT_EQ(present, expected.size()) << "round " << round;
    ASSERT_EQ(capture.stats().helpers, options.helpers);
    exited += capture.stats().exited_during_attach;
    max_passes = std::max(max_passes, capture.stats().passes);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  std::printf(
      "[ info ] 50 stops during churn (%d threads created): %lld ms, %d exited mid-attach, "
      "at most %d listing passes\n",
      churn.created(), static_cast<long long>(ms), exited, max_passes);
}

TEST_F(ThreadCaptureTest, HandlesAThousandIdleThreads) {
  ASSERT_TRUE(magic_.Start(0, 1000, 64 * 1024));
  const std::vector<pid_t> expected = magic_.Tids();
  ThreadCapture capture;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  const auto t1 = std::chrono::steady_clock::now();
  const size_t present = CountPresent(capture.threads(), expected);
  capture.ReleaseAll();
  const auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(present, 1000u);
  using std::chrono::microseconds;
  std::printf(
      "[ info ] 1000 idle threads: StopAll %lld us, ReleaseAll %lld us, %d passes, %d helpers\n",
      static_cast<long long>(std::chrono::duration_cast<microseconds>(t1 - t0).count()),
      static_cast<long long>(std::chrono::duration_cast<microseconds>(t2 - t1).count()),
      capture.stats().passes, capture.stats().helpers);
  ExpectMagicFound(capture.threads(), magic_);
}

// No fixed capacity: a stop that meets more threads than it prepared slots for releases them,
// grows and stops again (the first attempt made too small through the test hook).
TEST_F(ThreadCaptureTest, GrowsWhenThreadsOutnumberTheSlots) {
  ASSERT_TRUE(magic_.Start(2, 40, 64 * 1024));
  const std::vector<pid_t> expected = magic_.Tids();
  for (int helpers : {1, 2}) {
    ThreadCapture::Options options;
    options.helpers = helpers;
    options.first_slots_for_testing = 4;
    ThreadCapture capture(options);
    ASSERT_TRUE(capture.StopAll()) << capture.error();
    const size_t present = CountPresent(capture.threads(), expected);
    capture.ReleaseAll();
    EXPECT_EQ(present, expected.size()) << helpers << " helpers";
    EXPECT_GE(capture.stats().regrown, 1) << helpers << " helpers";
    ExpectMagicFound(capture.threads(), magic_);
    // The threads were released after the attempt that ran out: they run, and a later stop
    // (sized from the count again) finds every one at once.
    ThreadCapture again;
    ASSERT_TRUE(again.StopAll()) << again.error();
    EXPECT_EQ(CountPresent(again.threads(), expected), expected.size());
    again.ReleaseAll();
    EXPECT_EQ(again.stats().regrown, 0);
  }
}

TEST_F(ThreadCaptureTest, SignalMethodDeliversTheSameResult) {
  ASSERT_TRUE(magic_.Start(4, 4));
  ThreadCapture::Options options;
  options.method = ThreadCapture::Method::kSignals;
  ThreadCapture capture(options);
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  EXPECT_EQ(capture.method_used(), ThreadCapture::Method::kSignals);
  capture.ReleaseAll();
  ExpectMagicFound(capture.threads(), magic_);
}

// ---- CloneStoppedWorld(): the snapshot process sees the stopped world. ----------------------

// A thread that increments a register and stores it to memory, in a loop without system calls:
// wherever it is stopped, the register is the stored value or one ahead. A snapshot whose memory
// was copied while the thread ran would see a stored value ahead of the register.
struct Counter {
  std::atomic<uint64_t> stored{0};
  std::atomic<uint32_t> stop{0};
  std::atomic<pid_t> tid{0};
};

void* CountInRegister(void* argument) {
  auto* c = static_cast<Counter*>(argument);
  c->tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
#if defined(__x86_64__)
  register uint64_t value __asm__("rbx") = 0;
  __asm__ volatile(
      "1:\n\t"
      "incq %0\n\t"
      "movq %0, (%1)\n\t"
      "cmpl $0, (%2)\n\t"
      "je 1b\n\t"
      : "+r"(value)
      : "r"(&c->stored), "r"(&c->stop)
      : "memory", "cc");
#elif defined(__aarch64__)
  register uint64_t value __asm__("x19") = 0;
  __asm__ volatile(
      "1:\n\t"
      "add %0, %0, #1\n\t"
      "str %0, [%1]\n\t"
      "ldr w9, [%2]\n\t"
      "cbz w9, 1b\n\t"
      : "+r"(value)
      : "r"(&c->stored), "r"(&c->stop)
      : "memory", "cc", "x9");
#endif
  return nullptr;
}

uint64_t CounterRegister(const ThreadInfo& t) {
#if defined(__x86_64__)
  return t.regs[ThreadInfo::kRbx];
#else
  return t.regs[19];
#endif
}

// What the snapshot body checks (in the snapshot process: no gtest there, exit codes instead).
struct SnapshotCheck {
  const ThreadCapture* capture = nullptr;
  const MagicThreads* magic = nullptr;
  const Counter* counter = nullptr;
  pid_t caller = 0;
};

// 0: every check passed; otherwise the first failed check.
int CheckSnapshot(const SnapshotCheck& c) {
  const std::span<const ThreadInfo> threads = c.capture->threads();
  if (threads.empty() || !threads[0].is_caller || threads[0].tid != c.caller) return 20;
  if (c.magic != nullptr) {
    for (const MagicThreads::Thread& m : c.magic->threads()) {
      const ThreadInfo* t = FindTid(threads, m.tid.load());
      if (t == nullptr || t->is_caller) return 21;
#if defined(__x86_64__)
      const uint64_t rbx = t->regs[ThreadInfo::kRbx];
#else
      const uint64_t rbx = t->regs[19];
#endif
      if (m.spinning &&
          (rbx != m.rbx_magic || !VectorState(t->vector_bytes).ContainsWord(m.xmm_magic))) {
        return 22;
      }
      if (!m.spinning) {  // the blocked thread's stack, as the snapshot sees it
        const uintptr_t local = m.local_address.load();
        if (local < t->stack_pointer) return 23;
        if (*reinterpret_cast<const volatile uint64_t*>(local) != m.local_magic) return 24;
      }
    }
  }
  if (c.counter != nullptr) {
    const ThreadInfo* t = FindTid(threads, c.counter->tid.load());
    if (t == nullptr) return 25;
    const uint64_t stored = c.counter->stored.load();
    const uint64_t in_register = CounterRegister(*t);
    if (in_register != stored && in_register != stored + 1) return 26;
  }
  return 0;
}

int SnapshotBody(void* argument) {
  return CheckSnapshot(*static_cast<const SnapshotCheck*>(argument));
}

// The snapshot's exit status (-1 if it did not exit normally).
int ReapSnapshot(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, __WALL) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

class CloneStoppedWorldTest : public ThreadCaptureTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(magic_.Start(4, 4));
    ASSERT_EQ(pthread_create(&counter_thread_, nullptr, &CountInRegister, &counter_), 0);
    ASSERT_TRUE(WaitUntil([&] { return counter_.stored.load() > 1000; }, std::chrono::seconds(30)));
  }
  void TearDown() override {
    counter_.stop.store(1);
    pthread_join(counter_thread_, nullptr);
  }
  // Runs CloneStoppedWorld() with `method` (and `helpers` ptrace helpers) and checks the snapshot.
  void ExpectConsistentSnapshot(ThreadCapture::Method method, int helpers = 1) {
    ThreadCapture::Options options;
    options.method = method;
    options.helpers = helpers;
    ThreadCapture capture(options);
    SnapshotCheck check{&capture, &magic_, &counter_, static_cast<pid_t>(syscall(SYS_gettid))};
    const pid_t pid = capture.CloneStoppedWorld(&SnapshotBody, &check);
    ASSERT_GT(pid, 0) << pid << " " << capture.error();
    EXPECT_FALSE(capture.stopped());
    EXPECT_EQ(capture.method_used(), method);
    EXPECT_EQ(capture.stats().threads_stopped_ms > 0, method == ThreadCapture::Method::kPtrace);
    EXPECT_EQ(ReapSnapshot(pid), 0);
    // The world was released: the counter runs again.
    const uint64_t after = counter_.stored.load();
    EXPECT_TRUE(
        WaitUntil([&] { return counter_.stored.load() > after; }, std::chrono::seconds(30)));
    ExpectMagicFound(capture.threads(), magic_);  // threads() stays readable here too
  }

  Counter counter_;
  pthread_t counter_thread_{};
};

// The ptrace helper clones the snapshot: it sees every thread's registers (the spinning threads'
// magic, the counter's register matching the counter's memory) and the stopped threads' stacks.
TEST_F(CloneStoppedWorldTest, HelperSnapshotSeesEveryThreadsRegistersAndMemory) {
  ExpectConsistentSnapshot(ThreadCapture::Method::kPtrace);
}

TEST_F(CloneStoppedWorldTest, TwoHelpersSnapshotSeesEveryThreadsRegistersAndMemory) {
  ExpectConsistentSnapshot(ThreadCapture::Method::kPtrace, 2);
}

TEST_F(CloneStoppedWorldTest, SignalSuspensionSnapshotIsConsistentToo) {
  ExpectConsistentSnapshot(ThreadCapture::Method::kSignals);
}

// Threads starting and exiting while the world is stopped and cloned: every round yields a
// snapshot, the known threads are in it, and the world is released afterwards.
TEST_F(CloneStoppedWorldTest, ThreadsStartingAndExitingDuringTheStop) {
  ThreadChurn churn(4);
  const pid_t caller = static_cast<pid_t>(syscall(SYS_gettid));
  for (int round = 0; round < 30; ++round) {
    ThreadCapture::Options options;
    options.helpers = 1 + round % 2;
    ThreadCapture capture(options);
    SnapshotCheck check{&capture, &magic_, &counter_, caller};
    const pid_t pid = capture.CloneStoppedWorld(&SnapshotBody, &check);
    ASSERT_GT(pid, 0) << "round " << round << ": " << pid << " " << capture.error();
    EXPECT_FALSE(capture.stopped());
    ASSERT_EQ(ReapSnapshot(pid), 0) << "round " << round;
    ASSERT_EQ(capture.stats().helpers, options.helpers);
  }
  std::printf("[ info ] 30 snapshots during churn (%d threads created)\n", churn.created());
}

// ---- CloneStoppedWorld(..., Overlap): the caller's work beside the stop. --------------------

// What the overlap work makes, in shared memory: the snapshot (maybe cloned before the work ends)
// waits for `ready` and checks `value`.
struct OverlapShared {
  std::atomic<uint32_t> ready{0};
  uint32_t value = 0;
};

struct OverlapWork {
  OverlapShared* shared;
  pid_t caller;
  int calls = 0;
  bool on_caller = false;
  long sleep_ns = 0;
};

void DoOverlapWork(void* argument) {
  auto* work = static_cast<OverlapWork*>(argument);
  ++work->calls;
  work->on_caller = RawSyscall::Gettid() == work->caller;
  RawSyscall::Nanosleep(work->sleep_ns);  // longer than the stop: the world is released first
  work->shared->value = 42;
  work->shared->ready.store(1, std::memory_order_release);
}

int AwaitOverlapWork(void* argument) {
  auto* shared = static_cast<OverlapShared*>(argument);
  const int64_t deadline = RawSyscall::MonotonicNs() + 30'000'000'000;
  while (shared->ready.load(std::memory_order_acquire) == 0) {
    if (RawSyscall::MonotonicNs() > deadline) return 2;
    RawSyscall::Nanosleep(100'000);
  }
  return shared->value == 42 ? 0 : 1;
}

TEST_F(CloneStoppedWorldTest, OverlapWorkRunsOnTheCallerBesideTheStopAndReachesTheSnapshot) {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  for (ThreadCapture::Method method :
       {ThreadCapture::Method::kPtrace, ThreadCapture::Method::kSignals}) {
    auto* shared = new (page) OverlapShared;
    ThreadCapture::Options options;
    options.method = method;
    ThreadCapture capture(options);
    OverlapWork work{shared, static_cast<pid_t>(syscall(SYS_gettid))};
    work.sleep_ns = 300'000'000;
    ThreadCapture::Overlap overlap{&DoOverlapWork, &work};
    const pid_t pid =
        capture.CloneStoppedWorld(&AwaitOverlapWork, shared, nullptr, nullptr, &overlap);
    ASSERT_GT(pid, 0) << pid << " " << capture.error();
    EXPECT_TRUE(overlap.ran);
    EXPECT_EQ(work.calls, 1);
    EXPECT_TRUE(work.on_caller);
    EXPECT_FALSE(capture.stopped());
    EXPECT_EQ(ReapSnapshot(pid), 0);
    if (method == ThreadCapture::Method::kPtrace) {
      // The helper stopped, cloned and released the world while the work still slept.
      EXPECT_GT(capture.stats().threads_stopped_ms, 0);
      EXPECT_LT(capture.stats().threads_stopped_ms, 300);
    }
  }
  munmap(page, 4096);
}

// ---- CloneStoppedWorld(..., InPlace): the body in this process, the world stopped. ------------

struct InPlaceCheck {
  SnapshotCheck snapshot;
  uint64_t before = 0;  // the counter's memory as the body began
  uint64_t after = 0;   // and 30 ms later: equal if the world stayed stopped
  int answer = 0;       // what the body returns
};

int InPlaceBody(void* argument) {
  auto* c = static_cast<InPlaceCheck*>(argument);
  const int consistent = CheckSnapshot(c->snapshot);
  c->before = c->snapshot.counter->stored.load();
  RawSyscall::Nanosleep(30 * 1000000L);
  c->after = c->snapshot.counter->stored.load();
  return consistent != 0 ? consistent : c->answer;
}

// The body runs in this process's memory (what it writes is seen here), while the counting thread
// stays stopped (its memory does not move for 30 ms and matches its register); no snapshot
// process is made and the world runs again afterwards.
TEST_F(CloneStoppedWorldTest, InPlaceBodyRunsHereWhileEveryThreadIsStopped) {
  ThreadCapture capture;
  InPlaceCheck check{{&capture, &magic_, &counter_, static_cast<pid_t>(syscall(SYS_gettid))}};
  check.answer = 7;
  ThreadCapture::InPlace in_place;
  in_place.body = &InPlaceBody;
  const pid_t pid = capture.CloneStoppedWorld(&SnapshotBody, &check, nullptr, &in_place);
  ASSERT_EQ(pid, 0) << capture.error();
  ASSERT_TRUE(in_place.ran) << capture.error();
  EXPECT_EQ(in_place.status, 7);
  EXPECT_FALSE(capture.stopped());
  EXPECT_NE(check.before, 0u);  // written by the body, read here: the same memory
  EXPECT_EQ(check.before, check.after);
  EXPECT_GE(capture.stats().in_place_ms, 30.0);
  const uint64_t after = counter_.stored.load();
  EXPECT_TRUE(WaitUntil([&] { return counter_.stored.load() > after; }, std::chrono::seconds(30)));
}

// A body that returns kNeedsCopy: the snapshot process is made after all, from the same stop.
TEST_F(CloneStoppedWorldTest, InPlaceBodyAskingForACopyGetsASnapshotProcess) {
  ThreadCapture capture;
  InPlaceCheck check{{&capture, &magic_, &counter_, static_cast<pid_t>(syscall(SYS_gettid))}};
  check.answer = ThreadCapture::kNeedsCopy;
  ThreadCapture::InPlace in_place;
  in_place.body = &InPlaceBody;
  const pid_t pid = capture.CloneStoppedWorld(&SnapshotBody, &check.snapshot, nullptr, &in_place);
  ASSERT_GT(pid, 0) << capture.error();
  EXPECT_FALSE(in_place.ran);
  EXPECT_EQ(ReapSnapshot(pid), 0);
}

// Under signal suspension there is no helper to run the body: a snapshot process is made.
TEST_F(CloneStoppedWorldTest, InPlaceUnderSignalSuspensionMakesASnapshotProcess) {
  ThreadCapture::Options options;
  options.method = ThreadCapture::Method::kSignals;
  ThreadCapture capture(options);
  SnapshotCheck check{&capture, &magic_, &counter_, static_cast<pid_t>(syscall(SYS_gettid))};
  ThreadCapture::InPlace in_place;
  in_place.body = [](void*) { return 9; };
  const pid_t pid = capture.CloneStoppedWorld(&SnapshotBody, &check, nullptr, &in_place);
  ASSERT_GT(pid, 0) << capture.error();
  EXPECT_FALSE(in_place.ran);
  EXPECT_EQ(ReapSnapshot(pid), 0);
}

// A body that ends the helper task (what a fault does in an in-place scan): the program goes on,
// the capture reports the failure, and every thread runs again.
TEST_F(CloneStoppedWorldTest, InPlaceBodyEndingTheHelperReleasesTheWorld) {
  ThreadCapture capture;
  ThreadCapture::InPlace in_place;
  in_place.body = [](void*) -> int {
    for (;;) RawSyscall::Call(SYS_exit_group, 70);
  };
  const pid_t pid = capture.CloneStoppedWorld(&SnapshotBody, nullptr, nullptr, &in_place);
  EXPECT_EQ(pid, 0);
  EXPECT_FALSE(in_place.ran);
  EXPECT_FALSE(capture.stopped());
  EXPECT_NE(capture.error().find("died"), std::string::npos) << capture.error();
  const uint64_t after = counter_.stored.load();
  EXPECT_TRUE(WaitUntil([&] { return counter_.stored.load() > after; }, std::chrono::seconds(30)));
  // The next capture works.
  ThreadCapture again;
  ASSERT_TRUE(again.StopAll()) << again.error();
  again.ReleaseAll();
}

// The snapshot process runs with the caller's signal mask, not the helper's (which blocks every
// asynchronous signal).
TEST_F(ThreadCaptureTest, SnapshotRunsWithTheCallersSignalMask) {
  sigset_t block, saved;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &saved), 0);
  ThreadCapture capture;
  const pid_t pid = capture.CloneStoppedWorld(
      [](void*) {
        sigset_t now;
        pthread_sigmask(SIG_BLOCK, nullptr, &now);
        return sigismember(&now, SIGUSR2) == 1 && sigismember(&now, SIGTERM) == 0 ? 0 : 1;
      },
      nullptr);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ASSERT_GT(pid, 0) << capture.error();
  EXPECT_EQ(ReapSnapshot(pid), 0);
}

// ---- CloneStoppedWorld(body, argument, not_copied): ranges left out of the snapshot only. ----

struct NotCopiedCheck {
  const uint8_t* pages;  // three pages of 0x5a; the middle one is not copied
};

// 0 if the snapshot has the outer pages (contents intact) and lacks the middle one.
int CheckNotCopied(void* argument) {
  const auto* c = static_cast<const NotCopiedCheck*>(argument);
  const long page = sysconf(_SC_PAGESIZE);
  unsigned char residency = 0;
  for (int i : {0, 2}) {
    if (c->pages[i * page] != 0x5a || c->pages[(i + 1) * page - 1] != 0x5a) return 1;
  }
  void* middle = const_cast<uint8_t*>(c->pages + page);
  return mincore(middle, static_cast<size_t>(page), &residency) == -1 && errno == ENOMEM ? 0 : 2;
}

// 0 if a fork() child reads the middle page intact.
int ForkChildReadsMiddlePage(const uint8_t* pages, long page) {
  const pid_t child = fork();
  if (child == 0) _exit(pages[page] == 0x5a && pages[2 * page - 1] == 0x5a ? 0 : 1);
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// The ptrace helper marks the given ranges MADV_DONTFORK around its clone only (one helper or
// two): the snapshot lacks them, a fork() of the program afterwards copies them again.
TEST_F(ThreadCaptureTest, SnapshotLacksNotCopiedRangesAndLaterForksHaveThem) {
  ASSERT_TRUE(magic_.Start(4, 4));
  const long page = sysconf(_SC_PAGESIZE);
  void* mapped = mmap(nullptr, 3 * static_cast<size_t>(page), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* pages = static_cast<uint8_t*>(mapped);
  std::memset(pages, 0x5a, 3 * static_cast<size_t>(page));
  auto not_copied = std::make_unique<UnwinderMappings>();
  const auto middle = reinterpret_cast<uint64_t>(pages + page);
  ASSERT_TRUE(not_copied->Add(middle, middle + static_cast<uint64_t>(page)));
  NotCopiedCheck check{pages};
  for (int helpers : {1, 2}) {
    ThreadCapture::Options options;
    options.method = ThreadCapture::Method::kPtrace;
    options.helpers = helpers;
    ThreadCapture capture(options);
    const pid_t pid = capture.CloneStoppedWorld(&CheckNotCopied, &check, not_copied.get());
    ASSERT_GT(pid, 0) << pid << " " << capture.error();
    EXPECT_EQ(ReapSnapshot(pid), 0) << helpers << " helper(s)";
    EXPECT_EQ(ForkChildReadsMiddlePage(pages, page), 0) << helpers << " helper(s)";
  }
  // Without the ranges the snapshot has every page.
  ThreadCapture capture;
  const pid_t pid = capture.CloneStoppedWorld(&CheckNotCopied, &check);
  ASSERT_GT(pid, 0) << capture.error();
  EXPECT_EQ(ReapSnapshot(pid), 2);
  munmap(mapped, 3 * static_cast<size_t>(page));
}

// In a child process without CAP_SYS_PTRACE and not dumpable, ptrace is denied: kPtrace fails
// with the denial line, kAuto falls back to signals. Exit codes say which check failed.
int RunDeniedChild() {
  MagicThreads magic;
  if (!magic.Start(2, 2)) return 10;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return 11;
  data[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
  data[CAP_SYS_PTRACE / 32].permitted &= ~(1u << (CAP_SYS_PTRACE % 32));
  if (syscall(SYS_capset, &header, data) != 0) return 12;
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return 13;
  ThreadCapture::Options options;
  options.make_dumpable = false;
  options.method = ThreadCapture::Method::kPtrace;
  ThreadCapture strict(options);
  if (strict.StopAll()) return 14;
  if (strict.error().rfind("ptrace denied: PTRACE_SEIZE of thread ", 0) != 0) return 15;
  options.method = ThreadCapture::Method::kAuto;
  ThreadCapture fallback(options);
  if (!fallback.StopAll()) return 16;
  fallback.ReleaseAll();
  if (fallback.method_used() != ThreadCapture::Method::kSignals) return 17;
  const std::string& notice = fallback.notice();
  if (notice.find("ptrace denied: ") != 0) return 18;
  if (notice.find("; falling back to signal suspension") == std::string::npos) return 19;
  if (notice.find('\n') != std::string::npos) return 20;
  if (CountPresent(fallback.threads(), magic.Tids()) != 4) return 21;
  ThreadCapture snapshot(options);  // kAuto: the snapshot comes from the caller under signals
  const pid_t pid = snapshot.CloneStoppedWorld([](void*) { return 42; }, nullptr);
  if (pid <= 0 || snapshot.stopped()) return 22;
  if (snapshot.method_used() != ThreadCapture::Method::kSignals) return 23;
  if (ReapSnapshot(pid) != 42) return 24;
  std::printf("[ info ] child: %s\n", notice.c_str());
  std::fflush(stdout);
  return 0;
}

TEST_F(ThreadCaptureTest, PtraceDeniedFallsBackToSignalSuspension) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(RunDeniedChild());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace heapgraph::roots
