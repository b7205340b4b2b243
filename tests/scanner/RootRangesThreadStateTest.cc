// tests/scanner: RootRanges::ExcludeThreadState on this process's own map and real threads: the
// recorder's per-thread state (here a stand-in thread-local of the same kind) leaves every
// thread's roots, the program's thread-locals next to it stay. Not sanitized: Compute reads the
// live process's mappings with plain loads, which ASan's own mappings do not allow (as
// RootRangesLiveTcbTest).
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "heap/platform/StaticTlsArea.h"
#include "roots/ProcessMappings.h"
#include "scanner/RootRanges.h"

namespace heapgraph::scanner {
namespace {

using Range = std::pair<uint64_t, uint64_t>;

// Stand-ins for the recorder's per-thread state and for a program's thread-locals next to it.
__thread uint64_t t_recorder_state[512] __attribute__((tls_model("initial-exec")));
__thread void* volatile t_program_slot __attribute__((tls_model("initial-exec")));

// Real threads, each blocked with its own copies of both; the main thread is the scan's caller.
class BlockedThreads {
 public:
  static constexpr int kCount = 6;
  BlockedThreads() {
    pthread_barrier_init(&ready_, nullptr, kCount + 1);
    pthread_barrier_init(&release_, nullptr, kCount + 1);
    for (int i = 0; i < kCount; ++i) pthread_create(&threads_[i], nullptr, Run, this);
    pthread_barrier_wait(&ready_);
    infos_.push_back(Describe(true));
  }
  ~BlockedThreads() {
    pthread_barrier_wait(&release_);
    for (pthread_t t : threads_) pthread_join(t, nullptr);
    pthread_barrier_destroy(&ready_);
    pthread_barrier_destroy(&release_);
  }
  const std::vector<roots::ThreadInfo>& infos() const { return infos_; }
  const std::vector<Range>& states() const { return states_; }
  const std::vector<Range>& slots() const { return slots_; }

 private:
  roots::ThreadInfo Describe(bool caller) {
    roots::ThreadInfo t;
    t.tid = gettid();
    t.is_caller = caller;
    t.stack_pointer = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#if defined(__x86_64__)
    t.regs[roots::ThreadInfo::kFsBase] = StaticTlsArea::ThreadPointer();
#endif
    auto state = reinterpret_cast<uint64_t>(t_recorder_state);
    auto slot = reinterpret_cast<uint64_t>(&t_program_slot);
    std::lock_guard<std::mutex> hold(lock_);
    states_.emplace_back(state, state + sizeof(t_recorder_state));
    slots_.emplace_back(slot, slot + sizeof(void*));
    return t;
  }
  static void* Run(void* self) {
    auto* b = static_cast<BlockedThreads*>(self);
    roots::ThreadInfo t = b->Describe(false);
    {
      std::lock_guard<std::mutex> hold(b->lock_);
      b->infos_.push_back(t);
    }
    pthread_barrier_wait(&b->ready_);
    pthread_barrier_wait(&b->release_);
    return nullptr;
  }

  pthread_t threads_[kCount];
  pthread_barrier_t ready_, release_;
  std::mutex lock_;
  std::vector<roots::ThreadInfo> infos_;
  std::vector<Range> states_, slots_;
};

bool Covered(const RootRanges& roots, Range r) {
  for (const RootRange& root : roots.ranges()) {
    if (root.begin <= r.first && r.second <= root.end) return true;
  }
  return false;
}

bool Touched(const RootRanges& roots, Range r) {
  for (const RootRange& root : roots.ranges()) {
    if (root.begin < r.second && r.first < root.end) return true;
  }
  return false;
}

// Every thread's copy of the recorder's state leaves the roots, and nothing else does: the
// program's thread-local next to it stays a root in every thread.
TEST(RootRangesThreadStateTest, RecorderThreadStateIsCutFromEveryThreadsStaticTls) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "only x86-64 captures each thread's thread pointer (fs_base)";
#endif
  const uint64_t tls_size = RootRanges::StaticTlsSize();
  ASSERT_GT(tls_size, 0u);
  BlockedThreads threads;
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read());
  std::vector<BlockRange, MmapAllocator<BlockRange>> none;
  BlockIndex index(std::move(none));
  RootRanges roots;
  roots.Compute(mappings, threads.infos(), index, threads.infos().back().stack_pointer, {},
                tls_size);
  const uint64_t before = roots.total_bytes();
  ASSERT_EQ(threads.states().size(), size_t{BlockedThreads::kCount + 1});
  for (const Range& s : threads.states()) ASSERT_TRUE(Covered(roots, s));
  StaticTlsArea area = StaticTlsArea::Of(t_recorder_state, sizeof(t_recorder_state));
  roots.ExcludeThreadState(area, threads.infos(), tls_size);
  for (const Range& s : threads.states()) EXPECT_FALSE(Touched(roots, s));
  for (const Range& s : threads.slots()) EXPECT_TRUE(Covered(roots, s));
  EXPECT_EQ(before - roots.total_bytes(), threads.states().size() * sizeof(t_recorder_state));
}

// An area that does not lie inside a thread's static TLS is never cut (a wrong offset must not
// hide the program's memory), nor anything when the static TLS size is unknown.
TEST(RootRangesThreadStateTest, ThreadStateOutsideStaticTlsIsNotCut) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "only x86-64 captures each thread's thread pointer (fs_base)";
#endif
  const uint64_t tls_size = RootRanges::StaticTlsSize();
  ASSERT_GT(tls_size, 0u);
  BlockedThreads threads;
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read());
  std::vector<BlockRange, MmapAllocator<BlockRange>> none;
  BlockIndex index(std::move(none));
  RootRanges roots;
  roots.Compute(mappings, threads.infos(), index, threads.infos().back().stack_pointer, {},
                tls_size);
  const uint64_t before = roots.total_bytes();
  StaticTlsArea area = StaticTlsArea::Of(t_recorder_state, sizeof(t_recorder_state));
  roots.ExcludeThreadState(area, threads.infos(), /*static_tls_size=*/0);
  EXPECT_EQ(roots.total_bytes(), before);
  // Above the thread pointer (the TCB on x86-64), and reaching below the static TLS.
  roots.ExcludeThreadState(StaticTlsArea(64, 256), threads.infos(), tls_size);
  roots.ExcludeThreadState(StaticTlsArea(-static_cast<int64_t>(tls_size) - 64, 256),
                           threads.infos(), tls_size);
  EXPECT_EQ(roots.total_bytes(), before);
  for (const Range& s : threads.states()) EXPECT_TRUE(Covered(roots, s));
}

}  // namespace
}  // namespace heapgraph::scanner
