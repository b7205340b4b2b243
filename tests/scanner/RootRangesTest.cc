#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <utility>
#include <vector>

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

// A thread running on a sigaltstack handler or a swapcontext fiber: the range around its SP, and
// its own stack whole ("[stack]" for the main thread), since its frames there are live.
constexpr char kOffStackMaps[] =
    "10000000-10010000 rw-p 00000000 00:00 0\n"         // an alternate stack (mmap)
    "10100000-10110000 rw-p 00000000 00:00 0 [heap]\n"  // the brk heap
    "7ff00000-7ff21000 rw-p 00000000 00:00 0 [stack]\n";

std::vector<Range> StackRoots(const roots::ThreadInfo& thread, uint64_t caller_stack_pointer,
                              std::span<const HeapgraphCheckEntrant> entrants = {}) {
  roots::ProcessMappings mappings;
  mappings.ParseText(kOffStackMaps);
  // Two heap blocks; the first is a malloc'd alternate stack.
  std::vector<BlockRange, MmapAllocator<BlockRange>> blocks = {{0x10101000, 0x2000},
                                                               {0x10104000, 0x1000}};
  BlockIndex index(std::move(blocks));
  RootRanges roots;
  const roots::ThreadInfo threads[] = {thread};
  roots.Compute(mappings, threads, index, caller_stack_pointer, {}, /*static_tls_size=*/0);
  roots.ExcludeWaitingCheckFrames(entrants, threads, mappings);
  std::vector<Range> out;
  for (const RootRange& r : roots.ranges()) {
    if (r.thread_stack) out.emplace_back(r.begin, r.end);
  }
  std::sort(out.begin(), out.end());
  return out;
}

roots::ThreadInfo MainThread(uint64_t sp, bool caller) {
  roots::ThreadInfo t;
  t.tid = 1000;
  t.is_main = true;
  t.is_caller = caller;
  t.stack_pointer = sp;
  t.regs[roots::ThreadInfo::kStackPointer] = sp;
  return t;
}

TEST(RootRangesTest, MainThreadOnItsStackIsScannedFromSpOnly) {
  EXPECT_EQ(StackRoots(MainThread(0x7ff10000, false), 0),
            (std::vector<Range>{{0x7ff10000 - roots::ThreadInfo::kRedZone, 0x7ff21000}}));
  EXPECT_EQ(StackRoots(MainThread(0x7ff10000, true), 0x7ff10040),
            (std::vector<Range>{{0x7ff10040, 0x7ff21000}}));
}

// A thread inside a check call (heap/runtime/CheckEntrants) is scanned from the program's frame
// that asked for the check; an entry being filled (negative tid), another thread's entry, or a
// frame below SP or on another mapping cuts nothing.
TEST(RootRangesTest, ThreadWaitingForACheckIsScannedFromTheProgramsFrame) {
  const roots::ThreadInfo waiting = MainThread(0x7ff10000, false);
  const uint64_t top = 0x7ff21000, from_sp = 0x7ff10000 - roots::ThreadInfo::kRedZone;
  const HeapgraphCheckEntrant listed[] = {{0, 0}, {1000, 0x7ff10400}};
  EXPECT_EQ(StackRoots(waiting, 0, listed), (std::vector<Range>{{0x7ff10400, top}}));
  for (HeapgraphCheckEntrant other :
       {HeapgraphCheckEntrant{-1000, 0x7ff10400}, HeapgraphCheckEntrant{1001, 0x7ff10400},
        HeapgraphCheckEntrant{1000, 0x7ff0ff00}, HeapgraphCheckEntrant{1000, 0x10008000}}) {
    const HeapgraphCheckEntrant one[] = {other};
    EXPECT_EQ(StackRoots(waiting, 0, one), (std::vector<Range>{{from_sp, top}}))
        << other.tid << " " << std::hex << other.stack_pointer;
  }
}

TEST(RootRangesTest, MainThreadOffItsStackGetsItsStackScannedWhole) {
  // Stopped on an alternate stack of its own mapping.
  EXPECT_EQ(StackRoots(MainThread(0x1000c000, false), 0),
            (std::vector<Range>{{0x1000c000 - roots::ThreadInfo::kRedZone, 0x10010000},
                                {0x7ff00000, 0x7ff21000}}));
  // The thread running the check, on a fiber: its SP in the ThreadInfo is ignored.
  EXPECT_EQ(StackRoots(MainThread(0x7ff10000, true), 0x1000c000),
            (std::vector<Range>{{0x1000c000, 0x10010000}, {0x7ff00000, 0x7ff21000}}));
}

TEST(RootRangesTest, StackInAHeapBlockIsScannedWithinTheBlockOnly) {
  EXPECT_EQ(StackRoots(MainThread(0x10102800, false), 0),
            (std::vector<Range>{{0x10102800 - roots::ThreadInfo::kRedZone, 0x10103000},
                                {0x7ff00000, 0x7ff21000}}));
  EXPECT_EQ(StackRoots(MainThread(0x7ff10000, true), 0x10102800),
            (std::vector<Range>{{0x10102800, 0x10103000}, {0x7ff00000, 0x7ff21000}}));
  // SP in the heap mapping but in no block: up to the mapping's end, as before.
  EXPECT_EQ(StackRoots(MainThread(0x10108000, false), 0),
            (std::vector<Range>{{0x10108000 - roots::ThreadInfo::kRedZone, 0x10110000},
                                {0x7ff00000, 0x7ff21000}}));
}

TEST(RootRangesTest, PreparedBuffersOfProcessMappingsAreReported) {
  roots::ProcessMappings mappings;
  mappings.Reserve(1 << 20, 1000);
  auto buffers = mappings.BufferRanges();
  EXPECT_GE(buffers[0].second - buffers[0].first, uint64_t{1} << 20);
  EXPECT_GE(buffers[1].second - buffers[1].first, 1000 * sizeof(roots::ProcessMappings::Mapping));
}

// A sparse reservation keeps as roots only its pages that exist (here two of 64 MiB).
TEST(RootRangesTest, SkipAbsentPagesKeepsOnlyThePagesThatExist) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t pages = (64u << 20) / page;
  void* p = mmap(nullptr, (pages + 2) * page, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* area = static_cast<char*>(p) + page;
  ASSERT_EQ(mprotect(area, pages * page, PROT_READ | PROT_WRITE), 0);
  madvise(area, pages * page, MADV_NOHUGEPAGE);
  area[100 * page] = 1;
  area[(pages - 1) * page] = 1;
  // The map of this process, reduced to that mapping (a root of its own).
  roots::ProcessMappings live;
  ASSERT_TRUE(live.Read());
  const roots::ProcessMappings::Mapping* m = live.Find(reinterpret_cast<uint64_t>(area));
  ASSERT_NE(m, nullptr);
  char line[128];
  snprintf(line, sizeof(line), "%lx-%lx rw-p 00000000 00:00 0\n", m->start, m->end);
  roots::ProcessMappings mappings;
  mappings.ParseText(line);
  BlockIndex index(std::vector<BlockRange, MmapAllocator<BlockRange>>{});
  RootRanges roots;
  roots.Compute(mappings, {}, index, 0, {}, 0);
  PresentPages present(mappings);
  roots.SkipAbsentPages(present);
  std::vector<Range> out;
  for (const RootRange& r : roots.ranges()) out.emplace_back(r.begin, r.end);
  const uint64_t a = reinterpret_cast<uint64_t>(area);
  EXPECT_EQ(out, (std::vector<Range>{{a + 100 * page, a + 101 * page},
                                     {a + (pages - 1) * page, a + pages * page}}));
  EXPECT_EQ(roots.absent_pages(), pages - 2);
  EXPECT_EQ(roots.total_bytes(), 2 * page);
  munmap(p, (pages + 2) * page);
}

}  // namespace
}  // namespace heapgraph::scanner
