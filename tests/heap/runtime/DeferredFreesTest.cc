// tests/heap/runtime: DeferredFrees on glibc's own blocks (__libc_malloc, what the interposer
// calls): which chunks may wait in a queue, a push that counts after writing and says when the
// queue is full, a batch applied from its last entry down (each block out of the tree, the count
// below it, then glibc's free), without the tree when asked, and the registry of queues. Reads
// glibc's chunk headers: built and run unsanitized, like BlockTagTest.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "heap/runtime/BlockTag.h"
#include "heap/runtime/DeferredFrees.h"
#include "heap/runtime/GlibcAllocator.h"
#include "heap/store/LiveAllocationTree.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

BlockRecord Block(void* address, uint64_t size) {
  BlockRecord block;
  block.address = reinterpret_cast<uintptr_t>(address);
  block.size = size;
  block.stack = 1;
  return block;
}

TEST(DeferredFreesTest, OnlySmallChunksOfTheHeapMayWait) {
  void* small = __libc_malloc(40);
  void* page = __libc_malloc(4000);
  void* larger = __libc_malloc(8192);
  void* mapped = __libc_malloc(size_t{4} << 20);
  EXPECT_TRUE(DeferredFrees::Queues(small));
  EXPECT_TRUE(DeferredFrees::Queues(page));
  EXPECT_FALSE(DeferredFrees::Queues(larger)) << "above 4 KiB";
  EXPECT_FALSE(DeferredFrees::Queues(mapped)) << "a chunk mapped by itself";
  for (void* p : {small, page, larger, mapped}) __libc_free(p);
}

TEST(DeferredFreesTest, APushCountsItsEntryAndTheLastSaysTheQueueIsFull) {
  HeapgraphDeferredFrees queue{};
  std::vector<int> cells(DeferredFrees::kCapacity);
  for (uint32_t i = 0; i < DeferredFrees::kCapacity; ++i) {
    EXPECT_EQ(DeferredFrees::Push(queue, &cells[i]), i + 1 == DeferredFrees::kCapacity) << i;
    EXPECT_EQ(queue.count, i + 1);
    EXPECT_EQ(queue.address[i], reinterpret_cast<uintptr_t>(&cells[i]));
  }
}

// Three tagged blocks and one the tree never held: all freed, the tagged ones out of the tree,
// the first entry freed last (glibc's per-thread cache hands it out first).
TEST(DeferredFreesTest, ABatchIsAppliedFromItsLastEntryDown) {
  TempDir dir;
  auto tree = std::make_unique<LiveAllocationTree>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  HeapgraphDeferredFrees queue{};
  for (int i = 0; i < 4; ++i) {
    void* block = __libc_malloc(block_tag::PaddedRequest(40));
    if (i < 3) {
      LiveAllocationTree::Slot slot;
      ASSERT_TRUE(tree->Insert(Block(block, 40), 1, &slot));
      block_tag::Write(block, slot.shard, slot.index);
    }
    DeferredFrees::Push(queue, block);
  }
  ASSERT_EQ(tree->LiveCount(), 3u);
  const uintptr_t first = queue.address[0];
  DeferredFrees::Apply(queue, tree.get(), LiveAllocationTree::kNoShard);
  EXPECT_EQ(queue.count, 0u);
  EXPECT_EQ(tree->LiveCount(), 0u);
  void* again = __libc_malloc(block_tag::PaddedRequest(40));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again), first) << "the first entry was not freed last";
  __libc_free(again);
}

TEST(DeferredFreesTest, WithoutATreeABatchIsOnlyFreed) {
  TempDir dir;
  auto tree = std::make_unique<LiveAllocationTree>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  void* block = __libc_malloc(block_tag::PaddedRequest(40));
  LiveAllocationTree::Slot slot;
  ASSERT_TRUE(tree->Insert(Block(block, 40), 0, &slot));
  block_tag::Write(block, slot.shard, slot.index);
  HeapgraphDeferredFrees queue{};
  DeferredFrees::Push(queue, block);
  DeferredFrees::Apply(queue, nullptr, LiveAllocationTree::kNoShard);
  EXPECT_EQ(queue.count, 0u);
  EXPECT_EQ(tree->LiveCount(), 1u) << "the tree was touched";
}

TEST(DeferredFreesTest, TheRegistryHandsOutEverySlotOnceAndTakesThemBack) {
  std::vector<HeapgraphDeferredFrees> queues(DeferredFrees::kSlots + 1);
  std::vector<uint32_t> slots(queues.size());
  for (uint32_t i = 0; i < DeferredFrees::kSlots; ++i) {
    ASSERT_TRUE(DeferredFrees::Register(&queues[i], &slots[i])) << i;
    EXPECT_EQ(DeferredFrees::Slots()[slots[i]], &queues[i]);
  }
  EXPECT_FALSE(DeferredFrees::Register(&queues.back(), &slots.back())) << "more than kSlots";
  uint32_t visited = 0;
  DeferredFrees::ForEachRegistered([&](HeapgraphDeferredFrees&, uint32_t) { ++visited; });
  EXPECT_EQ(visited, DeferredFrees::kSlots);
  DeferredFrees::Unregister(slots[7]);
  EXPECT_EQ(DeferredFrees::Slots()[slots[7]], nullptr);
  ASSERT_TRUE(DeferredFrees::Register(&queues.back(), &slots.back()));
  EXPECT_EQ(slots.back(), slots[7]);
  for (uint32_t i = 0; i < DeferredFrees::kSlots; ++i) DeferredFrees::Unregister(i);
  visited = 0;
  DeferredFrees::ForEachRegistered([&](HeapgraphDeferredFrees&, uint32_t) { ++visited; });
  EXPECT_EQ(visited, 0u);
}

}  // namespace
}  // namespace heapgraph
