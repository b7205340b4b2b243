// tests/heap: LiveAllocationTree (the slab-shard tree of heap.tree): what only it does, the sampled
// mark (format version 3), its free-slot stacks, inserts into a named shard (and on to the next
// when it is full) and removes by slot, and shards owned by threads: at most half of them, given
// back, forgotten by a forked child, passed over by inserts of threads without one. What it shares
// with VmRegionTree is tested in ShardedTreeTest.cc.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include "heap/platform/ProcessBarrier.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/PersistedFormat.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using format::AllocFunction;

// The tree is large (1024 SlabShards inline): keep it off the stack.
std::unique_ptr<LiveAllocationTree> NewTree() {
  return std::make_unique<LiveAllocationTree>();
}

format::TreeHeader HeaderOf(const LiveAllocationTree& tree) {
  format::TreeHeader h;
  memcpy(&h, tree.file().data(), sizeof(h));
  return h;
}

TEST(LiveAllocationTreeTest, MarkSampledWritesVersion3AndTheMean) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  EXPECT_EQ(format::kHashTreeVersion, HeaderOf(*tree).file.version);
  EXPECT_EQ(0u, HeaderOf(*tree).sample_mean);
  tree->MarkSampled(4096);
  EXPECT_EQ(format::kSampledTreeVersion, HeaderOf(*tree).file.version);
  EXPECT_EQ(4096u, HeaderOf(*tree).sample_mean);
  tree->MarkSampled(0);  // a mean of 0 is a full recording
  EXPECT_EQ(format::kHashTreeVersion, HeaderOf(*tree).file.version);
  EXPECT_EQ(0u, HeaderOf(*tree).sample_mean);
}

TEST(LiveAllocationTreeTest, CreateMapsAFreeSlotStackAndItsLinksForEveryShard) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 12));
  EXPECT_NE(0u, tree->free_slots().begin());
  EXPECT_EQ(2 * 4 * (uint64_t{1} << 12) * sizeof(uint32_t),
            tree->free_slots().end() - tree->free_slots().begin());
}

TEST(LiveAllocationTreeTest, AFailedCreateLeavesNoStacks) {
  TempDir dir;
  auto first = NewTree();
  ASSERT_TRUE(first->Create(dir.fd(), "heap.tree", 4, 10));
  auto second = NewTree();
  EXPECT_FALSE(second->Create(dir.fd(), "heap.tree", 4, 10));
  EXPECT_EQ(EEXIST, errno);
  EXPECT_EQ(0u, second->free_slots().begin());
  EXPECT_EQ(0u, second->free_slots().end());
}

BlockRecord HeapBlock(uint64_t address, uint64_t size) {
  return BlockRecord{.address = address, .size = size, .function = AllocFunction::kMalloc};
}

TEST(LiveAllocationTreeTest, ABlockGoesToTheNamedShardAndIsRemovedByItsSlot) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  LiveAllocationTree::Slot slot;
  ASSERT_TRUE(tree->Insert(HeapBlock(0x7000, 24), 6, &slot));  // 6 is shard 2 of 4
  EXPECT_EQ(2u, slot.shard);
  EXPECT_EQ(0u, slot.index);
  EXPECT_TRUE(tree->Holds(slot, 0x7000));
  EXPECT_FALSE(tree->Holds(slot, 0x7010));
  EXPECT_FALSE(tree->Holds({9, 0}, 0x7000)) << "no shard 9";
  EXPECT_FALSE(tree->Remove(LiveAllocationTree::Slot{1, 0}, 0x7000, nullptr));
  ASSERT_TRUE(tree->MarkIgnored(slot, 0x7000));
  BlockRecord removed;
  ASSERT_TRUE(tree->Remove(slot, 0x7000, &removed));
  EXPECT_EQ(24u, removed.size);
  EXPECT_TRUE(removed.ignored);
  EXPECT_EQ(0u, tree->LiveCount());
}

TEST(LiveAllocationTreeTest, ATreeNotCreatedRefusesEverything) {
  auto tree = NewTree();
  LiveAllocationTree::Slot slot;
  EXPECT_FALSE(tree->Insert(HeapBlock(0x7000, 24), 3, &slot));
  EXPECT_FALSE(tree->Holds(LiveAllocationTree::Slot{0, 0}, 0x7000));
  EXPECT_FALSE(tree->Remove(LiveAllocationTree::Slot{0, 0}, 0x7000, nullptr));
  EXPECT_FALSE(tree->MarkIgnored(LiveAllocationTree::Slot{0, 0}, 0x7000));
}

// A shard that is full sends the block on to the next shard with room; a block no shard can take
// is counted once, as dropped by the shard named first.
TEST(LiveAllocationTreeTest, AFullShardPassesTheBlockOnAndOnlyARefusalByAllIsDropped) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 2, 10));
  const uint64_t per_shard = uint64_t{1} << 10;
  LiveAllocationTree::Slot slot;
  for (uint64_t i = 0; i < 2 * per_shard; ++i) {
    ASSERT_TRUE(tree->Insert(HeapBlock(0x10000 + i * 32, 8), 1, &slot)) << i;
    EXPECT_EQ(i < per_shard ? 1u : 0u, slot.shard) << i;
  }
  EXPECT_FALSE(tree->Insert(HeapBlock(0x900000, 8), 1, &slot));
  EXPECT_EQ(1u, tree->shard(1).header()->dropped);
  EXPECT_EQ(0u, tree->shard(0).header()->dropped);
  EXPECT_EQ(2 * per_shard, tree->LiveCount());
}

// What tools and tests use, knowing only addresses: Find and Remove read every slot.
TEST(LiveAllocationTreeTest, FindAndRemoveByAddressReadEveryShard) {
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 12));
  constexpr uint64_t kBlocks = 3000;
  for (uint64_t i = 0; i < kBlocks; ++i) {
    ASSERT_TRUE(tree->Insert(HeapBlock(0x5555'0000'0000 + i * 4096, i + 1))) << i;
  }
  for (uint64_t i = 0; i < kBlocks; i += 7) {
    LiveAllocationTree::Slot slot;
    ASSERT_TRUE(tree->Find(0x5555'0000'0000 + i * 4096, &slot)) << i;
    BlockRecord removed;
    ASSERT_TRUE(tree->Remove(0x5555'0000'0000 + i * 4096, &removed)) << i;
    EXPECT_EQ(i + 1, removed.size);
    EXPECT_FALSE(tree->Find(0x5555'0000'0000 + i * 4096, &slot)) << i;
  }
  EXPECT_EQ(kBlocks - (kBlocks + 6) / 7, tree->LiveCount());
}

// Half the shards at most have an owner; an owned shard serves its owner's inserts and frees,
// other threads insert elsewhere and free beside it; a released shard can be claimed again.
TEST(LiveAllocationTreeTest, ThreadsOwnAtMostHalfTheShardsAndInsertOnlyIntoTheirOwn) {
  ASSERT_TRUE(ProcessBarrier::Register()) << "membarrier(2) is refused here";
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  EXPECT_EQ(1u, tree->Claim(1));
  EXPECT_EQ(2u, tree->Claim(1)) << "the next one without an owner";
  EXPECT_EQ(LiveAllocationTree::kNoShard, tree->Claim(3)) << "two of four";
  LiveAllocationTree::Slot slot;
  ASSERT_TRUE(tree->Insert(HeapBlock(0x7000, 24), 1, &slot, true));
  EXPECT_EQ(1u, slot.shard);
  LiveAllocationTree::Slot other;
  ASSERT_TRUE(tree->Insert(HeapBlock(0x8000, 24), 1, &other));
  EXPECT_EQ(3u, other.shard) << "past the owned shards 1 and 2";
  ASSERT_TRUE(tree->Remove(slot, 0x7000, nullptr, 2)) << "freed beside the owner";
  EXPECT_EQ(1u, tree->shard(1).header()->freed_elsewhere_count);
  EXPECT_EQ(1u, tree->LiveCount());
  ASSERT_TRUE(tree->Insert(HeapBlock(0x7000, 24), 1, &slot, true));
  EXPECT_EQ(0u, slot.index) << "the owner took the slot back";
  ASSERT_TRUE(tree->Remove(slot, 0x7000, nullptr, 1)) << "its own free";
  EXPECT_EQ(1u, tree->shard(1).header()->freed_elsewhere_count);
  tree->Release(2);
  EXPECT_EQ(3u, tree->Claim(3)) << "a shard given back leaves room for another owner";
}

// A forked child keeps the owner of its own thread's shard only.
TEST(LiveAllocationTreeTest, AForkedChildForgetsEveryOwnerButItsOwn) {
  ASSERT_TRUE(ProcessBarrier::Register());
  TempDir dir;
  auto tree = NewTree();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 8, 10));
  ASSERT_EQ(0u, tree->Claim(0));
  ASSERT_EQ(1u, tree->Claim(1));
  ASSERT_EQ(2u, tree->Claim(2));
  tree->DisownAllBut(1);
  EXPECT_FALSE(tree->shard(0).owned());
  EXPECT_TRUE(tree->shard(1).owned());
  EXPECT_FALSE(tree->shard(2).owned());
  EXPECT_EQ(2u, tree->Claim(2));
  EXPECT_EQ(3u, tree->Claim(2));
  EXPECT_EQ(4u, tree->Claim(2)) << "four of eight";
  EXPECT_EQ(LiveAllocationTree::kNoShard, tree->Claim(5));
}

}  // namespace
}  // namespace heapgraph
