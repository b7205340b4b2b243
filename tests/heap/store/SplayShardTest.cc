// tests/heap: SplayShard on a real MappedFile: exact results against std::map, in-order walks,
// node reuse, capacity exhaustion and the `writing` torn-node marker.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/SplayShard.h"
#include "tests/TempDir.h"
#include "tests/heap/store/ShardTestBlock.h"

namespace heapgraph {
namespace {

using format::AllocFunction;
using format::TreeNode;

// One shard laid out like a tree file: the ShardHeader in page 0, the node array from page 1.
class SplayShardTest : public testing::Test {
 protected:
  static constexpr uint64_t kNodesOffset = format::kPageSize;

  // (Re)creates the shard with `capacity` nodes in a new file.
  void Attach(uint32_t capacity) {
    file_.Unmap();
    std::string name = "shard" + std::to_string(files_++);
    uint64_t size = kNodesOffset + uint64_t{capacity} * sizeof(TreeNode);
    ASSERT_TRUE(file_.Create(dir_.fd(), name.c_str(), size));
    ASSERT_TRUE(file_.Reserve(0, kNodesOffset));
    header_ = reinterpret_cast<format::ShardHeader*>(file_.data());
    nodes_ = reinterpret_cast<TreeNode*>(file_.data() + kNodesOffset);
    shard_.Attach(header_, nodes_, capacity, &file_, kNodesOffset);
    shard_.Reset();
  }

  void SetUp() override { Attach(1024); }
  void TearDown() override { file_.Unmap(); }

  // Every block, by an in-order walk with a stack as deep as the tree can be.
  std::vector<BlockRecord> Walk() {
    std::vector<uint32_t> stack(shard_.live_count() + 1);
    std::vector<BlockRecord> blocks;
    EXPECT_TRUE(shard_.ForEachInOrder(stack.data(), stack.size(),
                                      [&](const BlockRecord& b) { blocks.push_back(b); }));
    return blocks;
  }

  TempDir dir_;
  int files_ = 0;
  MappedFile file_;
  format::ShardHeader* header_ = nullptr;
  TreeNode* nodes_ = nullptr;
  SplayShard shard_;
};

void ExpectSameBlock(const BlockRecord& expected, const BlockRecord& actual) {
  EXPECT_EQ(expected.address, actual.address);
  EXPECT_EQ(expected.size, actual.size);
  EXPECT_EQ(expected.stack, actual.stack);
  EXPECT_EQ(expected.seq, actual.seq);
  EXPECT_EQ(expected.function, actual.function);
}

TEST_F(SplayShardTest, EmptyShardFindsNothing) {
  BlockRecord found;
  EXPECT_FALSE(shard_.Floor(UINT64_MAX, &found));
  EXPECT_FALSE(shard_.Remove(0x1000, &found));
  EXPECT_EQ(0u, shard_.live_count());
  EXPECT_EQ(0u, shard_.live_bytes());
  EXPECT_TRUE(Walk().empty());
  EXPECT_EQ(1u, header_->used);
  EXPECT_EQ(0u, header_->writing);
}

TEST_F(SplayShardTest, InsertedBlockIsFoundByFloorAtItsAddress) {
  BlockRecord block = ShardTestBlock(0x1000, 48, 3, 4, AllocFunction::kCalloc);
  ASSERT_TRUE(shard_.Upsert(block));
  BlockRecord found;
  ASSERT_TRUE(shard_.Floor(0x1000, &found));
  ExpectSameBlock(block, found);
  EXPECT_EQ(1u, shard_.live_count());
  EXPECT_EQ(48u, shard_.live_bytes());
}

TEST_F(SplayShardTest, UpsertAtSameAddressOverwritesInsteadOfAdding) {
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 48)));
  BlockRecord replacement = ShardTestBlock(0x1000, 100, 11, 12, AllocFunction::kRealloc);
  ASSERT_TRUE(shard_.Upsert(replacement));
  EXPECT_EQ(1u, shard_.live_count());
  EXPECT_EQ(100u, shard_.live_bytes());
  BlockRecord found;
  ASSERT_TRUE(shard_.Floor(0x1000, &found));
  ExpectSameBlock(replacement, found);
  EXPECT_EQ(2u, header_->used) << "an overwrite must not take a new node";
}

TEST_F(SplayShardTest, RemoveReturnsTheBlockAndForgetsIt) {
  BlockRecord block = ShardTestBlock(0x2000, 64, 5, 6, AllocFunction::kPosixMemalign);
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 16)));
  ASSERT_TRUE(shard_.Upsert(block));
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x3000, 32)));
  BlockRecord removed;
  ASSERT_TRUE(shard_.Remove(0x2000, &removed));
  ExpectSameBlock(block, removed);
  EXPECT_EQ(2u, shard_.live_count());
  EXPECT_EQ(48u, shard_.live_bytes());
  EXPECT_FALSE(shard_.Remove(0x2000, &removed));
  BlockRecord found;
  ASSERT_TRUE(shard_.Floor(0x2000, &found));
  EXPECT_EQ(0x1000u, found.address);
}

TEST_F(SplayShardTest, RemoveAcceptsNullOutput) {
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 16)));
  EXPECT_TRUE(shard_.Remove(0x1000, nullptr));
  EXPECT_EQ(0u, shard_.live_count());
}

TEST_F(SplayShardTest, RemoveOfAnAddressInsideABlockRemovesNothing) {
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 64)));
  BlockRecord removed;
  EXPECT_FALSE(shard_.Remove(0x1008, &removed));
  EXPECT_EQ(1u, shard_.live_count());
  EXPECT_EQ(64u, shard_.live_bytes());
}

TEST_F(SplayShardTest, FloorIsTheGreatestAddressNotAbove) {
  for (uint64_t a : {0x300, 0x100, 0x200}) ASSERT_TRUE(shard_.Upsert(ShardTestBlock(a, 8)));
  BlockRecord found;
  EXPECT_FALSE(shard_.Floor(0xff, &found));
  ASSERT_TRUE(shard_.Floor(0x100, &found));
  EXPECT_EQ(0x100u, found.address);
  ASSERT_TRUE(shard_.Floor(0x1ff, &found));
  EXPECT_EQ(0x100u, found.address);
  ASSERT_TRUE(shard_.Floor(0x250, &found));
  EXPECT_EQ(0x200u, found.address);
  ASSERT_TRUE(shard_.Floor(UINT64_C(0x7fffffffffff), &found));
  EXPECT_EQ(0x300u, found.address);
}

TEST_F(SplayShardTest, RecordKeepsFullWidthAddressSizeStackAndSeq) {
  BlockRecord block = ShardTestBlock((uint64_t{1} << 48) - 16, format::kMaxBlockSize, UINT32_MAX,
                                     UINT32_MAX, AllocFunction::kMremap);
  ASSERT_TRUE(shard_.Upsert(block));
  BlockRecord found;
  ASSERT_TRUE(shard_.Floor(block.address, &found));
  ExpectSameBlock(block, found);
  EXPECT_EQ(format::kMaxBlockSize, shard_.live_bytes());
}

TEST_F(SplayShardTest, RemovedNodeIsZeroedSoReadersSeeItAsFree) {
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 16)));
  uint32_t index = header_->root;
  ASSERT_NE(0u, index);
  ASSERT_TRUE(shard_.Remove(0x1000, nullptr));
  EXPECT_EQ(0u, nodes_[index].address());
  EXPECT_EQ(0u, nodes_[index].size());
  EXPECT_EQ(AllocFunction::kNone, nodes_[index].function);
  EXPECT_EQ(index, header_->free_head);
}

TEST_F(SplayShardTest, ForEachInOrderVisitsAscendingAddresses) {
  std::vector<uint64_t> addresses(500);
  for (size_t i = 0; i < addresses.size(); ++i) addresses[i] = 0x10000 + i * 32;
  std::shuffle(addresses.begin(), addresses.end(), std::mt19937(7));
  for (uint64_t a : addresses) ASSERT_TRUE(shard_.Upsert(ShardTestBlock(a, a % 100)));
  // Splay a few times so the shape is not just the insertion order.
  BlockRecord found;
  for (uint64_t a : {0x10000, 0x13000, 0x11110}) shard_.Floor(a, &found);

  std::vector<BlockRecord> blocks = Walk();
  ASSERT_EQ(addresses.size(), blocks.size());
  std::sort(addresses.begin(), addresses.end());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(addresses[i], blocks[i].address);
    EXPECT_EQ(addresses[i] % 100, blocks[i].size);
  }
}

TEST_F(SplayShardTest, ForEachInOrderDoesNotChangeTheTree) {
  for (uint64_t a = 0x1000; a < 0x2000; a += 0x40) ASSERT_TRUE(shard_.Upsert(ShardTestBlock(a, 1)));
  std::vector<TreeNode> before(nodes_, nodes_ + header_->used);
  uint32_t root = header_->root;
  Walk();
  EXPECT_EQ(root, header_->root);
  EXPECT_EQ(0, memcmp(before.data(), nodes_, before.size() * sizeof(TreeNode)));
}

TEST_F(SplayShardTest, ForEachInOrderFailsCleanlyWhenTheStackIsTooSmall) {
  // Ascending inserts leave a left spine as deep as the tree: the walk needs every entry.
  constexpr uint32_t kBlocks = 100;
  for (uint32_t i = 0; i < kBlocks; ++i)
    ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000 + i * 16, 1)));

  // Exactly sized vectors: ASan reports any write past the capacity the walk was given.
  std::vector<uint32_t> small(kBlocks - 1);
  uint64_t visited = 0;
  EXPECT_FALSE(
      shard_.ForEachInOrder(small.data(), small.size(), [&](const BlockRecord&) { ++visited; }));
  EXPECT_EQ(0u, visited) << "the left spine is pushed before anything is visited";
  EXPECT_FALSE(shard_.ForEachInOrder(nullptr, 0, [&](const BlockRecord&) { ++visited; }));

  std::vector<uint32_t> enough(kBlocks);
  EXPECT_TRUE(
      shard_.ForEachInOrder(enough.data(), enough.size(), [&](const BlockRecord&) { ++visited; }));
  EXPECT_EQ(kBlocks, visited);
  EXPECT_EQ(kBlocks, shard_.live_count());
}

TEST_F(SplayShardTest, ForEachInOrderOnEmptyShardNeedsNoStack) {
  EXPECT_TRUE(shard_.ForEachInOrder(nullptr, 0, [](const BlockRecord&) { FAIL(); }));
}

TEST_F(SplayShardTest, WritingIsZeroAfterEveryOperation) {
  BlockRecord found;
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 8)));
  EXPECT_EQ(0u, header_->writing);
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000, 16)));
  EXPECT_EQ(0u, header_->writing);
  ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x0800, 16)));
  EXPECT_EQ(0u, header_->writing);
  ASSERT_TRUE(shard_.Floor(0x0900, &found));
  EXPECT_EQ(0u, header_->writing);
  ASSERT_TRUE(shard_.Remove(0x1000, &found));
  EXPECT_EQ(0u, header_->writing);
  ASSERT_FALSE(shard_.Remove(0x1000, &found));
  EXPECT_EQ(0u, header_->writing);
}

TEST_F(SplayShardTest, FreedNodesAreReusedSoUsedStaysBoundedUnderChurn) {
  constexpr uint32_t kLive = 300;
  uint64_t base = 0x100000;
  for (int round = 0; round < 50; ++round) {
    for (uint32_t i = 0; i < kLive; ++i)
      ASSERT_TRUE(shard_.Upsert(ShardTestBlock(base + i * 16, 16)));
    for (uint32_t i = 0; i < kLive; ++i) ASSERT_TRUE(shard_.Remove(base + i * 16, nullptr));
    base += kLive * 16;  // fresh addresses every round
  }
  EXPECT_EQ(0u, shard_.live_count());
  EXPECT_EQ(0u, shard_.live_bytes());
  EXPECT_EQ(kLive + 1, header_->used);
  EXPECT_EQ(0u, header_->dropped);
}

TEST_F(SplayShardTest, FullShardRefusesNewBlocksAndCountsThem) {
  constexpr uint32_t kCapacity = 16;  // node 0 is the sentinel: 15 blocks fit
  ASSERT_NO_FATAL_FAILURE(Attach(kCapacity));
  SplayShard& shard = shard_;
  format::ShardHeader* header = header_;

  for (uint32_t i = 1; i < kCapacity; ++i) ASSERT_TRUE(shard.Upsert(ShardTestBlock(i * 0x100, 10)));
  EXPECT_FALSE(shard.Upsert(ShardTestBlock(0x10000, 10)));
  EXPECT_FALSE(shard.Upsert(ShardTestBlock(0x20000, 10)));
  EXPECT_EQ(2u, header->dropped);
  EXPECT_EQ(kCapacity - 1, shard.live_count());
  EXPECT_EQ((kCapacity - 1) * 10, shard.live_bytes());
  EXPECT_EQ(0u, header->writing);

  // Overwriting a present block needs no node and still works; a removal makes room again.
  EXPECT_TRUE(shard.Upsert(ShardTestBlock(0x100, 20)));
  EXPECT_TRUE(shard.Remove(0x200, nullptr));
  EXPECT_TRUE(shard.Upsert(ShardTestBlock(0x10000, 10)));
  EXPECT_EQ(2u, header->dropped);
  EXPECT_EQ(kCapacity, header->used);

  std::vector<uint32_t> stack(kCapacity);
  std::vector<uint64_t> seen;
  ASSERT_TRUE(shard.ForEachInOrder(stack.data(), stack.size(),
                                   [&](const BlockRecord& b) { seen.push_back(b.address); }));
  ASSERT_EQ(kCapacity - 1, seen.size());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

TEST_F(SplayShardTest, DiskIsReservedAheadOfEveryHandedOutNodeIn64KiBSteps) {
  constexpr uint32_t kCapacity = 8192;  // 224 KiB of nodes
  ASSERT_NO_FATAL_FAILURE(Attach(kCapacity));
  EXPECT_EQ(0u, header_->backed_bytes);
  for (uint32_t i = 0; i < 5000; ++i) {
    ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x1000 + i * 16, 1)));
    ASSERT_GE(header_->backed_bytes, uint64_t{header_->used} * sizeof(TreeNode));
  }
  EXPECT_EQ(3u * 64 * 1024, header_->backed_bytes);  // 5001 nodes: 140 KB
  struct stat st;
  ASSERT_EQ(0, fstat(file_.fd(), &st));
  EXPECT_GE(uint64_t(st.st_blocks) * 512, header_->backed_bytes);
}

TEST_F(SplayShardTest, SequentialInsertsThenInOrderWalkAndLookups) {
  constexpr uint32_t kBlocks = 50000;
  ASSERT_NO_FATAL_FAILURE(Attach(kBlocks + 1));

  for (uint32_t i = 0; i < kBlocks; ++i)
    ASSERT_TRUE(shard_.Upsert(ShardTestBlock(0x10000 + i * 16, i)));
  EXPECT_EQ(uint64_t{kBlocks}, shard_.live_count());
  std::vector<BlockRecord> blocks = Walk();
  ASSERT_EQ(kBlocks, blocks.size());
  for (uint32_t i = 0; i < kBlocks; ++i) {
    ASSERT_EQ(0x10000 + i * 16, blocks[i].address);
    ASSERT_EQ(i, blocks[i].size);
  }
  // The deepest node first (a splay of the whole spine), then scattered lookups.
  BlockRecord found;
  ASSERT_TRUE(shard_.Floor(0x10000, &found));
  EXPECT_EQ(0x10000u, found.address);
  ASSERT_TRUE(shard_.Floor(0x10000 + 25000 * 16 + 3, &found));
  EXPECT_EQ(0x10000u + 25000 * 16, found.address);
  for (uint32_t i = 0; i < kBlocks; i += 2) ASSERT_TRUE(shard_.Remove(0x10000 + i * 16, nullptr));
  EXPECT_EQ(uint64_t{kBlocks / 2}, shard_.live_count());
  blocks = Walk();
  ASSERT_EQ(kBlocks / 2, blocks.size());
  for (uint32_t i = 0; i < kBlocks / 2; ++i)
    ASSERT_EQ(0x10000 + (2 * i + 1) * 16, blocks[i].address);
}

// 100k random upserts, removes and floors, cross-checked against std::map after every step.
TEST_F(SplayShardTest, RandomOperationsMatchStdMap) {
  ASSERT_NO_FATAL_FAILURE(Attach(4096));

  std::mt19937 random(20240607);
  std::uniform_int_distribution<uint64_t> slot(0, 3000);  // ~1500 live on average: many hits
  std::uniform_int_distribution<uint64_t> size(0, 1 << 20);
  std::uniform_int_distribution<int> op(0, 99);
  std::map<uint64_t, BlockRecord> model;
  uint64_t model_bytes = 0;
  constexpr uint64_t kBase = 0x5555'0000'0000;

  for (uint32_t step = 0; step < 100000; ++step) {
    int what = op(random);
    uint64_t address = kBase + slot(random) * 48;
    if (what < 45) {
      BlockRecord b = ShardTestBlock(address, size(random), step, step * 3,
                                     step % 2 ? AllocFunction::kMalloc : AllocFunction::kMmap);
      ASSERT_TRUE(shard_.Upsert(b)) << "step " << step;
      auto it = model.find(address);
      if (it != model.end()) model_bytes -= it->second.size;
      model[address] = b;
      model_bytes += b.size;
    } else if (what < 80) {
      BlockRecord removed;
      auto it = model.find(address);
      ASSERT_EQ(it != model.end(), shard_.Remove(address, &removed)) << "step " << step;
      if (it != model.end()) {
        ExpectSameBlock(it->second, removed);
        model_bytes -= it->second.size;
        model.erase(it);
      }
    } else {
      uint64_t probe = address + (what % 3) * 16 - 16;  // below, at and above a slot
      BlockRecord found;
      auto it = model.upper_bound(probe);
      bool expected = it != model.begin();
      ASSERT_EQ(expected, shard_.Floor(probe, &found)) << "step " << step;
      if (expected) ExpectSameBlock(std::prev(it)->second, found);
    }
    ASSERT_EQ(model.size(), shard_.live_count()) << "step " << step;
    ASSERT_EQ(model_bytes, shard_.live_bytes()) << "step " << step;
    ASSERT_EQ(0u, header_->writing) << "step " << step;
    if (step % 10000 == 9999) {
      std::vector<BlockRecord> blocks = Walk();
      ASSERT_EQ(model.size(), blocks.size());
      auto it = model.begin();
      for (const BlockRecord& b : blocks) ExpectSameBlock((it++)->second, b);
    }
  }
  EXPECT_EQ(0u, header_->dropped);
  EXPECT_LE(header_->used, 3002u) << "freed nodes must be reused";
}

}  // namespace
}  // namespace heapgraph
