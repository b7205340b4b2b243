#include <gtest/gtest.h>

#include <set>

#include "roots/CaptureArena.h"

namespace heapgraph::roots {
namespace {

TEST(CaptureArenaTest, ClaimsUpToCapacityThenReportsOverflow) {
  CaptureArena arena;
  ASSERT_TRUE(arena.Reserve(3, 100));
  EXPECT_EQ(arena.capacity(), 3u);
  EXPECT_EQ(arena.vector_size(), 128u);  // rounded up to 64
  EXPECT_EQ(arena.count(), 0u);
  ThreadInfo* a = arena.Claim();
  ThreadInfo* b = arena.Claim();
  ThreadInfo* c = arena.Claim();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(arena.overflowed());
  EXPECT_EQ(arena.Claim(), nullptr);
  EXPECT_TRUE(arena.overflowed());
  EXPECT_EQ(arena.count(), 3u);
  EXPECT_EQ(arena.Threads().data(), a);
}

TEST(CaptureArenaTest, SlotsLeaveRoomAndGrowAtLeastTwice) {
  // The live count plus a quarter and 64; a guess when the count was unreadable.
  EXPECT_EQ(CaptureArena::SlotsFor(10000), 12564u);
  EXPECT_EQ(CaptureArena::SlotsFor(1), 65u);
  EXPECT_EQ(CaptureArena::SlotsFor(-1), 1024u);
  // A retry: twice the previous slots, or more when the count grew further.
  EXPECT_EQ(CaptureArena::GrownSlots(4, 3), 67u);  // the count again: 3 + 0 + 64
  EXPECT_EQ(CaptureArena::GrownSlots(12564, 20000), 25128u);
  EXPECT_EQ(CaptureArena::GrownSlots(12564, 40000), 50064u);
  EXPECT_EQ(CaptureArena::GrownSlots(1024, -1), 2048u);
}

TEST(CaptureArenaTest, VectorBuffersAreAlignedDistinctAndWritable) {
  CaptureArena arena;
  ASSERT_TRUE(arena.Reserve(16, 2432));
  std::set<uintptr_t> starts;
  for (int i = 0; i < 16; ++i) {
    ThreadInfo* slot = arena.Claim();
    ASSERT_NE(slot, nullptr);
    std::span<uint8_t> buffer = arena.VectorBuffer(slot);
    EXPECT_EQ(buffer.size(), 2432u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 64, 0u);
    buffer.front() = 1;
    buffer.back() = 2;
    starts.insert(reinterpret_cast<uintptr_t>(buffer.data()));
  }
  EXPECT_EQ(starts.size(), 16u);
}

TEST(CaptureArenaTest, ClearAndReserveResetSlotsAndReuseTheMapping) {
  CaptureArena arena;
  ASSERT_TRUE(arena.Reserve(8, 512));
  ThreadInfo* first = arena.Claim();
  first->tid = 42;
  arena.Clear();
  EXPECT_EQ(arena.count(), 0u);
  ThreadInfo* again = arena.Claim();
  EXPECT_EQ(again, first);
  EXPECT_EQ(again->tid, 0);            // value-initialized on claim
  ASSERT_TRUE(arena.Reserve(4, 256));  // smaller: same mapping
  EXPECT_EQ(arena.Claim(), first);
  ASSERT_TRUE(arena.Reserve(64, 4096));  // larger: remapped
  EXPECT_EQ(arena.capacity(), 64u);
  EXPECT_EQ(arena.vector_size(), 4096u);
}

}  // namespace
}  // namespace heapgraph::roots
