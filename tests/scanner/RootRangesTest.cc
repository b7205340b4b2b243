#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "heap/StaticTlsArea.h"
#include "scanner/RootRanges.h"

namespace heapgraph::scanner {
namespace {

using Range = std::pair<uint64_t, uint64_t>;

// Two private anonymous read-write mappings and one read-only file mapping; no heap blocks in any.
constexpr char kMaps[] =
    "10000000-10010000 rw-p 00000000 00:00 0\n"
    "10020000-10030000 r--p 00000000 08:01 42 /usr/lib/libx.so\n"
    "10040000-10080000 rw-p 00000000 00:00 0\n";

std::vector<Range> Roots(std::vector<Range> exclude) {
  roots::ProcessMappings mappings;
  mappings.ParseText(kMaps);
  std::vector<BlockRange, MmapAllocator<BlockRange>> none;
  BlockIndex index(std::move(none));
  RootRanges roots;
  roots.Compute(mappings, {}, index, /*caller_stack_pointer=*/0, {}, /*static_tls_size=*/0);
  roots.Exclude(exclude);
  std::vector<Range> out;
  for (const RootRange& r : roots.ranges()) out.emplace_back(r.begin, r.end);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RootRangesTest, WritablePrivateMappingsWithoutBlocksAreRoots) {
  EXPECT_EQ(Roots({}), (std::vector<Range>{{0x10000000, 0x10010000}, {0x10040000, 0x10080000}}));
}

TEST(RootRangesTest, ExcludeCutsHolesAndEdgesAndDropsCoveredRanges) {
  EXPECT_EQ(Roots({{0x10044000, 0x10046000}}),
            (std::vector<Range>{
                {0x10000000, 0x10010000}, {0x10040000, 0x10044000}, {0x10046000, 0x10080000}}));
  EXPECT_EQ(Roots({{0x0fff0000, 0x10001000}, {0x10070000, 0x20000000}}),
            (std::vector<Range>{{0x10001000, 0x10010000}, {0x10040000, 0x10070000}}));
  EXPECT_EQ(Roots({{0x10000000, 0x10010000}}), (std::vector<Range>{{0x10040000, 0x10080000}}));
  // Two holes in one range, an empty range, and a range between mappings change nothing else.
  EXPECT_EQ(Roots({{0x10050000, 0x10051000},
                   {0x10060000, 0x10061000},
                   {0x10005000, 0x10005000},
                   {0x10012000, 0x10018000}}),
            (std::vector<Range>{{0x10000000, 0x10010000},
                                {0x10040000, 0x10050000},
                                {0x10051000, 0x10060000},
                                {0x10061000, 0x10080000}}));
}

// heap/UnwinderMappings entries are trusted only where the maps show private anonymous memory.
TEST(RootRangesTest, UnwinderMemoryIsExcludedOnlyFromPrivateAnonymousMappings) {
  roots::ProcessMappings mappings;
  mappings.ParseText(
      "10000000-10080000 rw-p 00000000 00:00 0\n"  // the program's memory merged with a cache
      "10090000-100a0000 rw-p 00000000 08:01 43 /usr/lib/libx.so\n"
      "100a0000-100b0000 rw-p 00000000 00:00 0\n"
      "100c0000-100d0000 rw-p 00000000 00:00 0\n"
      "100d0000-100e0000 rw-p 00000000 00:00 0 [anon:named]\n");
  std::vector<BlockRange, MmapAllocator<BlockRange>> none;
  BlockIndex index(std::move(none));
  RootRanges roots;
  roots.Compute(mappings, {}, index, 0, {}, 0);
  auto unwinder = std::make_unique<UnwinderMappings>();
  unwinder->Add(0x10040000, 0x10080000);  // a cache: excluded
  unwinder->Add(0x10090000, 0x100a8000);  // now a file's .data: a root, and so is what follows
  unwinder->Add(0x20000000, 0x20040000);  // no longer mapped: nothing
  unwinder->Add(0x100c8000, 0x100d8000);  // across two anonymous mappings: both parts excluded
  roots.ExcludeUnwinderMemory(*unwinder, mappings);
  std::vector<Range> out;
  for (const RootRange& r : roots.ranges()) out.emplace_back(r.begin, r.end);
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, (std::vector<Range>{{0x10000000, 0x10040000},
                                     {0x10090000, 0x100a0000},
                                     {0x100a0000, 0x100b0000},
                                     {0x100c0000, 0x100c8000},
                                     {0x100d8000, 0x100e0000}}));
}

TEST(RootRangesTest, PreparedBuffersOfProcessMappingsAreReported) {
  roots::ProcessMappings mappings;
  mappings.Reserve(1 << 20, 1000);
  auto buffers = mappings.BufferRanges();
  EXPECT_GE(buffers[0].second - buffers[0].first, uint64_t{1} << 20);
  EXPECT_GE(buffers[1].second - buffers[1].first, 1000 * sizeof(roots::ProcessMappings::Mapping));
}

uint64_t StaticTlsSize() {
  using Fn = void (*)(size_t*, size_t*);
  auto info = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
  size_t size = 0, align = 0;
  if (info != nullptr) info(&size, &align);
  return size;
}

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
TEST(RootRangesTest, RecorderThreadStateIsCutFromEveryThreadsStaticTls) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "only x86-64 captures each thread's thread pointer (fs_base)";
#endif
  const uint64_t tls_size = StaticTlsSize();
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
TEST(RootRangesTest, ThreadStateOutsideStaticTlsIsNotCut) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "only x86-64 captures each thread's thread pointer (fs_base)";
#endif
  const uint64_t tls_size = StaticTlsSize();
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
