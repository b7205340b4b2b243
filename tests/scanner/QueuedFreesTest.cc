// tests/scanner: QueuedFrees reads every registered queue of deferred frees (a null slot skipped,
// a count above the capacity taken as the capacity, a queue in memory that cannot be read skipped
// without a fault) into one sorted list, and drops exactly the blocks that start at a queued
// address from a scan's blocks and their ranges.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "scanner/QueuedFrees.h"

namespace heapgraph::scanner {
namespace {

TEST(QueuedFreesTest, ReadsEveryRegisteredQueueIntoOneSortedList) {
  HeapgraphDeferredFrees first{}, full{};
  first.count = 2;
  first.address[0] = 0x9000;
  first.address[1] = 0x1000;
  full.count = 1000;  // torn or corrupt: only the capacity is read
  for (uint32_t i = 0; i < HEAPGRAPH_DEFERRED_FREES; ++i) full.address[i] = 0x5000 + 16 * i;
  // Unreadable (kept mapped, so that nothing else is mapped there meanwhile).
  const long page = sysconf(_SC_PAGESIZE);
  void* gone = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  HeapgraphDeferredFrees* slots[] = {&first, nullptr, &full,
                                     static_cast<HeapgraphDeferredFrees*>(gone)};
  HeapgraphRecorderView view{};
  view.deferred_queues = slots;
  view.deferred_queue_slots = 4;
  MmapVector<uint64_t> queued = QueuedFrees::Read(view);
  ASSERT_EQ(queued.size(), 2u + HEAPGRAPH_DEFERRED_FREES);
  EXPECT_EQ(queued.front(), 0x1000u);
  EXPECT_EQ(queued.back(), 0x9000u);
  EXPECT_TRUE(std::is_sorted(queued.begin(), queued.end()));
  munmap(gone, page);
}

TEST(QueuedFreesTest, NoRegistryMeansNothingQueued) {
  HeapgraphRecorderView view{};
  EXPECT_TRUE(QueuedFrees::Read(view).empty());
}

TEST(QueuedFreesTest, DropsOnlyTheBlocksThatStartAtAQueuedAddress) {
  MmapVector<LeakedBlock> blocks;
  MmapVector<BlockRange> ranges;
  for (uint64_t address : {0x100, 0x200, 0x300, 0x400}) {
    LeakedBlock block;
    block.address = address;
    block.size = 0x80;
    blocks.push_back(block);
    ranges.push_back({address, 0x80});
  }
  const std::vector<uint64_t> queued = {0x200, 0x210, 0x400};  // 0x210: inside a block, kept
  EXPECT_EQ(QueuedFrees::Drop(queued, &blocks, &ranges), 2u);
  ASSERT_EQ(blocks.size(), 2u);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(blocks[0].address, 0x100u);
  EXPECT_EQ(blocks[1].address, 0x300u);
  EXPECT_EQ(ranges[1].begin, 0x300u);
}

}  // namespace
}  // namespace heapgraph::scanner
