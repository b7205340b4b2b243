#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "roots/ThreadCapture.h"
#include "roots/ThreadStacks.h"
#include "tests/roots/MagicThreads.h"

namespace heapgraph::roots {
namespace {

constexpr const char* kMaps =
    "10000-20000 rw-p 00000000 00:00 0\n"
    "20000-21000 ---p 00000000 00:00 0\n"
    "7ff000-800000 rw-p 00000000 00:00 0 [stack]\n";

ThreadInfo ThreadAt(pid_t tid, uintptr_t sp) {
  ThreadInfo info;
  info.tid = tid;
  info.stack_pointer = sp;
  return info;
}

TEST(ThreadStacksTest, RangeRunsFromBelowSpToTheEndOfItsMapping) {
  ProcessMappings maps;
  maps.ParseText(kMaps);
  const ThreadStacks::Range r = ThreadStacks::ForThread(ThreadAt(5, 0x18000), maps);
  EXPECT_EQ(r.tid, 5);
  EXPECT_EQ(r.begin, 0x18000 - ThreadInfo::kRedZone);
  EXPECT_EQ(r.end, 0x20000u);
  ASSERT_NE(r.mapping, nullptr);
  EXPECT_EQ(r.mapping->start, 0x10000u);
  EXPECT_EQ(r.size(), 0x8000 + ThreadInfo::kRedZone);
}

TEST(ThreadStacksTest, NeverStartsBelowSpMinusRedZoneNorBelowTheMapping) {
  ProcessMappings maps;
  maps.ParseText(kMaps);
  // SP just above the mapping start: the red zone is clipped to the mapping.
  const ThreadStacks::Range clipped = ThreadStacks::ForThread(ThreadAt(1, 0x10010), maps);
  EXPECT_EQ(clipped.begin, 0x10000u);
  const ThreadStacks::Range main = ThreadStacks::ForThread(ThreadAt(2, 0x7ffff0), maps);
  EXPECT_EQ(main.begin, 0x7ffff0 - ThreadInfo::kRedZone);
  EXPECT_EQ(main.end, 0x800000u);
  EXPECT_EQ(main.mapping->kind, ProcessMappings::Kind::kMainStack);
  for (uintptr_t sp : {uintptr_t{0x10000}, uintptr_t{0x10080}, uintptr_t{0x1ffff}}) {
    const ThreadStacks::Range r = ThreadStacks::ForThread(ThreadAt(3, sp), maps);
    EXPECT_GE(r.begin + ThreadInfo::kRedZone, sp);
    EXPECT_GE(r.begin, r.mapping->start);
    EXPECT_LE(r.begin, sp);
  }
}

TEST(ThreadStacksTest, SpOutsideEveryMappingGivesAnEmptyRange) {
  ProcessMappings maps;
  maps.ParseText(kMaps);
  for (uintptr_t sp : {uintptr_t{0}, uintptr_t{0x50}, uintptr_t{0x21000}, uintptr_t{0x800000}}) {
    const ThreadStacks::Range r = ThreadStacks::ForThread(ThreadAt(4, sp), maps);
    EXPECT_TRUE(r.empty()) << sp;
    EXPECT_EQ(r.mapping, nullptr);
  }
}

TEST(ThreadStacksTest, ComputeKeepsTheOrderAndDoesNotAllocateWithinTheReserve) {
  ProcessMappings maps;
  maps.ParseText(kMaps);
  const ThreadInfo threads[] = {ThreadAt(1, 0x18000), ThreadAt(2, 0x1), ThreadAt(3, 0x7ffff0)};
  ThreadStacks stacks;
  stacks.Reserve(3);
  stacks.Compute(threads, maps);
  const auto* storage = stacks.ranges().data();
  stacks.Compute(threads, maps);
  EXPECT_EQ(stacks.ranges().data(), storage);
  ASSERT_EQ(stacks.ranges().size(), 3u);
  EXPECT_EQ(stacks.ranges()[0].tid, 1);
  EXPECT_TRUE(stacks.ranges()[1].empty());
  EXPECT_EQ(stacks.ranges()[2].end, 0x800000u);
}

TEST(ThreadStacksTest, OwnStackOfTheMainThreadIsStackWhereverItsSpIs) {
  ProcessMappings maps;
  maps.ParseText(kMaps);
  ThreadInfo main = ThreadAt(1, 0x18000);  // on an alternate stack
  main.is_main = true;
  const ProcessMappings::Mapping* own = ThreadStacks::OwnStack(main, maps, 0);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->kind, ProcessMappings::Kind::kMainStack);
  EXPECT_EQ(ThreadStacks::OwnStack(ThreadAt(2, 0x18000), maps, 0), nullptr);
}

#if defined(__x86_64__)
TEST(ThreadStacksTest, OwnStackOfAnotherThreadHoldsItsControlBlockAtTheTop) {
  ProcessMappings maps;
  maps.ParseText(kMaps);
  ThreadInfo t = ThreadAt(2, 0x7ffff0);  // running on the main thread's stack, say
  t.regs[ThreadInfo::kFsBase] = 0x1f700;
  const ProcessMappings::Mapping* own = ThreadStacks::OwnStack(t, maps, 0x1000);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->start, 0x10000u);
  // The control block too far below the top (a stack inside a larger mapping), or the static TLS
  // size unknown: no own stack.
  EXPECT_EQ(ThreadStacks::OwnStack(t, maps, 0x800), nullptr);
  EXPECT_EQ(ThreadStacks::OwnStack(t, maps, 0), nullptr);
  t.regs[ThreadInfo::kFsBase] = 0x21000;  // in no mapping
  EXPECT_EQ(ThreadStacks::OwnStack(t, maps, 0x1000), nullptr);
}
#endif

// The live case: is_main marks the main thread alone, and each captured thread's own stack holds
// its SP (none runs elsewhere).
TEST(ThreadStacksTest, LiveThreadsOwnStacksHoldTheirSp) {
  testing::MagicThreads magic;
  ASSERT_TRUE(magic.Start(2, 6));
  using StaticTlsInfoFn = void (*)(size_t*, size_t*);
  size_t static_tls_size = 0, align = 0;
  if (auto info =
          reinterpret_cast<StaticTlsInfoFn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"))) {
    info(&static_tls_size, &align);
  }
  ProcessMappings maps;
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  capture.ReleaseAll();
  ASSERT_TRUE(maps.Read());  // the threads are blocked or spinning: their stacks are still there
  size_t main_threads = 0, own_stacks = 0;
  for (const ThreadInfo& t : capture.threads()) {
    main_threads += t.is_main ? 1 : 0;
    EXPECT_EQ(t.is_main, t.tid == getpid()) << t.tid;
    const ProcessMappings::Mapping* own = ThreadStacks::OwnStack(t, maps, static_tls_size);
    if (own == nullptr) continue;
    ++own_stacks;
    if (!t.is_caller) {
      EXPECT_TRUE(own->Contains(t.stack_pointer)) << t.tid;
    }
  }
  EXPECT_LE(main_threads, 1u);  // 0 when the test does not run on the main thread
#if defined(__x86_64__)
  if (static_tls_size != 0) {
    EXPECT_GE(own_stacks, 8u);  // every magic thread's
  }
#endif
}

// The live case: while the world is stopped, each blocked thread's stack range holds its local.
TEST(ThreadStacksTest, LiveRangesContainEachThreadsLocals) {
  testing::MagicThreads magic;
  ASSERT_TRUE(magic.Start(2, 6));
  ProcessMappings maps;
  maps.Reserve(1 << 20, 8192);
  ThreadStacks stacks;
  stacks.Reserve(64);
  ThreadCapture capture;
  ASSERT_TRUE(capture.StopAll()) << capture.error();
  const bool read = maps.ReadWithoutAllocating();
  if (read) stacks.Compute(capture.threads(), maps);
  // Count matches while stopped, without allocating.
  size_t found = 0;
  for (const testing::MagicThreads::Thread& m : magic.threads()) {
    if (m.spinning) continue;
    for (const ThreadStacks::Range& r : stacks.ranges()) {
      if (r.tid != m.tid.load()) continue;
      const uintptr_t address = m.local_address.load();
      uint64_t value = 0;
      if (address >= r.begin && address + sizeof(value) <= r.end) {
        std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof(value));
        found += value == m.local_magic ? 1 : 0;
      }
    }
  }
  capture.ReleaseAll();
  ASSERT_TRUE(read) << maps.error();
  EXPECT_EQ(found, 6u);
  for (const ThreadStacks::Range& r : stacks.ranges()) {
    EXPECT_FALSE(r.empty()) << r.tid;
    EXPECT_TRUE(r.mapping->writable);
  }
}

}  // namespace
}  // namespace heapgraph::roots
