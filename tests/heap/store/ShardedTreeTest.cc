// tests/heap: ShardedTree, typed over its two trees (LiveAllocationTree: slab shards, heap.tree
// format version 2; VmRegionTree: splay shards, vm.tree format version 1): the file header,
// sharding, exact totals under concurrent updates, metadata cost per block, CopyTo/Adopt (fork
// support), and the file as RecordingReader reads it back (it reads either layout as heap.tree).
// What only one tree does is tested in LiveAllocationTreeTest.cc and VmRegionTreeTest.cc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/StackStore.h"
#include "heap/store/VmRegionTree.h"
#include "reader/RecordingReader.h"
#include "tests/TempDir.h"
#include "tests/heap/store/ShardTestBlock.h"

namespace heapgraph {
namespace {

using format::AllocFunction;

std::string ReadWholeFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  struct stat st;
  fstat(fd, &st);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  return bytes;
}

// What the tests expect of each tree.
template <typename Tree>
struct Expected;

template <>
struct Expected<LiveAllocationTree> {
  static constexpr const char* kName = "LiveAllocationTree";
  static constexpr uint32_t kVersion = format::kHashTreeVersion;
  static bool FindInShard(SlabShard& shard, uint64_t address, BlockRecord* found) {
    uint32_t index;
    if (!shard.Find(address, &index)) return false;
    *found = SlabShard::ToRecord(shard.slots()[index]);
    return true;
  }
  // As the recorder does it: the inserter keeps the slot and removes the block by it.
  using Handle = LiveAllocationTree::Slot;
  static bool Insert(LiveAllocationTree& tree, const BlockRecord& block, Handle* handle) {
    const uint32_t first = static_cast<uint32_t>(&tree.ShardFor(block.address) - &tree.shard(0));
    return tree.Insert(block, first, handle);
  }
  static bool Remove(LiveAllocationTree& tree, Handle handle, uint64_t address,
                     BlockRecord* removed) {
    return tree.Remove(handle, address, removed);
  }
};

template <>
struct Expected<VmRegionTree> {
  static constexpr const char* kName = "VmRegionTree";
  static constexpr uint32_t kVersion = format::kVersion;
  static bool FindInShard(SplayShard& shard, uint64_t address, BlockRecord* found) {
    return shard.Floor(address, found) && found->address == address;
  }
  struct Handle {};
  static bool Insert(VmRegionTree& tree, const BlockRecord& block, Handle*) {
    return tree.Insert(block);
  }
  static bool Remove(VmRegionTree& tree, Handle, uint64_t address, BlockRecord* removed) {
    return tree.Remove(address, removed);
  }
};

// The tree is large (1024 shards inline): keep it off the stack.
template <typename Tree>
std::unique_ptr<Tree> NewTree() {
  return std::make_unique<Tree>();
}

template <typename Tree>
class ShardedTreeTest : public testing::Test {};

using Trees = testing::Types<LiveAllocationTree, VmRegionTree>;
TYPED_TEST_SUITE(ShardedTreeTest, Trees);

TYPED_TEST(ShardedTreeTest, CreateWritesAValidHeader) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 8, 12, 16));
  EXPECT_EQ(8u, tree->shard_count());
  std::string bytes = ReadWholeFile(dir.path() + "/heap.tree");
  ASSERT_EQ(TypeParam::FileSize(8, 12), bytes.size());
  format::TreeHeader h;
  memcpy(&h, bytes.data(), sizeof(h));
  EXPECT_EQ(0, memcmp(h.file.magic, format::kTreeMagic, 8));
  EXPECT_EQ(Expected<TypeParam>::kVersion, h.file.version);
  EXPECT_EQ(h.nodes_offset, h.file.header_size);
  EXPECT_EQ(sizeof(typename TypeParam::Node), h.node_size);
  EXPECT_EQ(8u, h.shard_count);
  EXPECT_EQ(16u, h.shard_shift);
  EXPECT_EQ(4096u, h.shard_capacity);
  EXPECT_EQ(0u, h.nodes_offset % format::kPageSize);
  EXPECT_GE(h.nodes_offset, 64 + 8 * sizeof(typename TypeParam::ShardHeader));
  EXPECT_EQ(0u, tree->LiveCount());
  EXPECT_EQ(0u, tree->LiveBytes());
  EXPECT_EQ(h.nodes_offset, tree->ReservedBytes());
}

TYPED_TEST(ShardedTreeTest, CreateRefusesShardCountsThatAreNotPowersOfTwoUpTo1024) {
  TempDir dir;
  for (uint32_t shards : {0u, 3u, 6u, 2048u}) {
    auto tree = NewTree<TypeParam>();
    EXPECT_FALSE(tree->Create(dir.fd(), ("t" + std::to_string(shards)).c_str(), shards, 10))
        << shards;
  }
  auto tree = NewTree<TypeParam>();
  EXPECT_TRUE(tree->Create(dir.fd(), "max", 1024, 10));
}

// Node indices and the shards' `writing` marker (1 + an index) are 32-bit.
TYPED_TEST(ShardedTreeTest, CreateRefusesMoreThan2To31NodesAShard) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  EXPECT_FALSE(tree->Create(dir.fd(), "t32", 1, 32));
  EXPECT_EQ(0u, tree->shard_count());
}

TYPED_TEST(ShardedTreeTest, CreateRefusesAnExistingFile) {
  TempDir dir;
  auto first = NewTree<TypeParam>();
  ASSERT_TRUE(first->Create(dir.fd(), "heap.tree", 4, 10));
  auto second = NewTree<TypeParam>();
  EXPECT_FALSE(second->Create(dir.fd(), "heap.tree", 4, 10));
}

TYPED_TEST(ShardedTreeTest, BlocksLandInTheShardChosenByTheirAddress) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  constexpr uint32_t kShards = 16;
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", kShards, 10));
  std::vector<uint64_t> expected(kShards);
  for (uint64_t page = 0; page < 3 * kShards; ++page) {
    uint64_t address = 0x7f00'0000'0000 + page * 4096 + 16;
    ASSERT_TRUE(tree->Insert(ShardTestBlock(address, 8)));
    ++expected[(address >> 12) & (kShards - 1)];
    BlockRecord found;
    ASSERT_TRUE(Expected<TypeParam>::FindInShard(tree->ShardFor(address), address, &found));
    EXPECT_EQ(address, found.address);
  }
  for (uint32_t i = 0; i < kShards; ++i) EXPECT_EQ(expected[i], tree->shard(i).live_count()) << i;
  EXPECT_EQ(3u * kShards, tree->LiveCount());
  EXPECT_EQ(3u * kShards * 8, tree->LiveBytes());
}

TYPED_TEST(ShardedTreeTest, ShardShiftChoosesTheWindowSize) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10, 20));  // 1 MiB windows
  EXPECT_EQ(&tree->ShardFor(0x100000), &tree->ShardFor(0x1fffff));
  EXPECT_EQ(&tree->shard(1), &tree->ShardFor(0x100000));
  EXPECT_EQ(&tree->shard(2), &tree->ShardFor(0x200000));
  EXPECT_EQ(&tree->shard(0), &tree->ShardFor(0x400000));
}

// At the default shard size each 64 MiB window (one glibc arena heap) has its own group of 8
// shards, the next window the next group: two threads' arenas share no shard.
TYPED_TEST(ShardedTreeTest, EachArenaWindowSpreadsOverItsOwnGroupOfShards) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 64, 22));
  EXPECT_EQ(8u, tree->shard_group());
  EXPECT_EQ(8u, reinterpret_cast<const format::TreeHeader*>(tree->file().data())->shard_group);
  const uint64_t window = uint64_t{1} << 26;
  const uint64_t base = 0x7f00'0000'0000;  // a multiple of 64 MiB: window index 0 mod 8
  std::set<const void*> first, second;
  for (uint64_t page = 0; page < 64; ++page) {
    first.insert(&tree->ShardFor(base + page * 4096 + 16));
    second.insert(&tree->ShardFor(base + window + page * 4096 + 16));
  }
  EXPECT_EQ(8u, first.size());
  EXPECT_EQ(8u, second.size());
  for (const void* s : first) EXPECT_EQ(0u, second.count(s));
  EXPECT_EQ(&tree->shard(0), &tree->ShardFor(base));
  EXPECT_EQ(&tree->shard(7), &tree->ShardFor(base + 7 * 4096));
  EXPECT_EQ(&tree->shard(0), &tree->ShardFor(base + 8 * 4096));
  EXPECT_EQ(&tree->shard(8), &tree->ShardFor(base + window));
  EXPECT_EQ(&tree->shard(0), &tree->ShardFor(base + 8 * window)) << "the groups wrap";
}

// Small shards could not hold a full window in a group of 8: the group grows to what a window
// needs (2^22 slots), up to every shard, which is the plain (address >> 12) & (shards - 1) rule.
TYPED_TEST(ShardedTreeTest, SmallShardsSpreadAWindowOverMoreShards) {
  TempDir dir;
  auto small = NewTree<TypeParam>();
  ASSERT_TRUE(small->Create(dir.fd(), "small.tree", 64, 18));
  EXPECT_EQ(16u, small->shard_group());
  auto tiny = NewTree<TypeParam>();
  ASSERT_TRUE(tiny->Create(dir.fd(), "tiny.tree", 64, 15));
  EXPECT_EQ(64u, tiny->shard_group());
  for (uint64_t page = 0; page < 200; ++page) {
    uint64_t address = 0x5555'1234'5000 + page * 4096;
    EXPECT_EQ(&tiny->shard((address >> 12) & 63), &tiny->ShardFor(address));
  }
}

TYPED_TEST(ShardedTreeTest, RemoveReturnsTheRemovedBlock) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 10));
  ASSERT_TRUE(tree->Insert(ShardTestBlock(0x5000, 77, 3, 4, AllocFunction::kAlignedAlloc)));
  BlockRecord removed;
  ASSERT_TRUE(tree->Remove(0x5000, &removed));
  EXPECT_EQ(77u, removed.size);
  EXPECT_EQ(3u, removed.stack);
  EXPECT_EQ(4u, removed.seq);
  EXPECT_EQ(AllocFunction::kAlignedAlloc, removed.function);
  EXPECT_FALSE(tree->Remove(0x5000, &removed));
  EXPECT_EQ(0u, tree->LiveCount());
}

// 4 threads x 200k blocks in disjoint address ranges that all span every shard, so the threads
// meet on every shard lock. Each removes every third of its blocks.
TYPED_TEST(ShardedTreeTest, ConcurrentInsertsAndRemovesGiveExactTotals) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  constexpr uint32_t kThreads = 4, kBlocks = 200000, kShards = 64;
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", kShards, 15));
  std::vector<uint64_t> failures(kThreads);
  std::vector<std::thread> threads;
  using Handle = typename Expected<TypeParam>::Handle;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t base = 0x1000'0000 + uint64_t{t} * 0x1000'0000;
      std::vector<Handle> handles(kBlocks);
      for (uint32_t i = 0; i < kBlocks; ++i) {
        if (!Expected<TypeParam>::Insert(*tree, ShardTestBlock(base + i * 16, i % 1000 + 1, t, i),
                                         &handles[i])) {
          ++failures[t];
        }
      }
      for (uint32_t i = 0; i < kBlocks; i += 3) {
        BlockRecord removed;
        if (!Expected<TypeParam>::Remove(*tree, handles[i], base + i * 16, &removed) ||
            removed.size != i % 1000 + 1 || removed.stack != t) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t count = 0, bytes = 0;
  for (uint32_t i = 0; i < kBlocks; ++i) {
    if (i % 3 == 0) continue;
    ++count;
    bytes += i % 1000 + 1;
  }
  for (uint32_t t = 0; t < kThreads; ++t) EXPECT_EQ(0u, failures[t]) << "thread " << t;
  EXPECT_EQ(kThreads * count, tree->LiveCount());
  EXPECT_EQ(kThreads * bytes, tree->LiveBytes());
  uint64_t dropped = 0;
  for (uint32_t i = 0; i < kShards; ++i) {
    dropped += tree->shard(i).header()->dropped;
    EXPECT_EQ(0u, tree->shard(i).header()->writing);
    EXPECT_EQ(0u, tree->shard(i).header()->lock.load());
  }
  EXPECT_EQ(0u, dropped);
}

// Metadata cost: reserved file bytes per live block with the default 64 shards.
TYPED_TEST(ShardedTreeTest, ReservedBytesPerBlockAtOneMillionLiveBlocks) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  constexpr uint32_t kBlocks = 1000000;
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 64, 15));
  // 16-byte blocks spread evenly over the shards, as a malloc arena's small blocks would be.
  for (uint32_t i = 0; i < kBlocks; ++i) {
    ASSERT_TRUE(tree->Insert(ShardTestBlock(0x5555'0000'0000 + uint64_t{i} * 16, 16)));
  }
  ASSERT_EQ(uint64_t{kBlocks}, tree->LiveCount());
  double per_block = static_cast<double>(tree->ReservedBytes()) / tree->LiveCount();
  struct stat st;
  ASSERT_EQ(0, fstat(tree->file().fd(), &st));
  double on_disk = static_cast<double>(st.st_blocks) * 512 / tree->LiveCount();
  printf(
      "[ figure   ] %s: %.2f reserved bytes/block, %.2f allocated on disk, at %u live blocks in "
      "64 shards (node %zu bytes)\n",
      Expected<TypeParam>::kName, per_block, on_disk, kBlocks, sizeof(typename TypeParam::Node));
  EXPECT_LE(per_block, 32.0);
  this->RecordProperty("reserved_bytes_per_block", std::to_string(per_block));
}

// Reservations are chunks of up to 64 KiB (SlabShard::kReserveStep; the splay tree's too) but
// never pass a shard's region (2^10 nodes = 24 or 28 KiB, the smallest shard_capacity_log2 Config
// allows), so ReservedBytes() never exceeds the file.
TYPED_TEST(ShardedTreeTest, ReservedBytesNeverExceedTheFile) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  constexpr uint32_t kShards = 4, kCapacityLog2 = 10;
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", kShards, kCapacityLog2));
  for (uint32_t i = 0; i < kShards; ++i)
    ASSERT_TRUE(tree->Insert(ShardTestBlock(0x10000 + i * 4096, 8)));
  const uint64_t shard_bytes = (uint64_t{1} << kCapacityLog2) * sizeof(typename TypeParam::Node);
  for (uint32_t i = 0; i < kShards; ++i) {
    EXPECT_LE(tree->shard(i).header()->backed_bytes, shard_bytes) << "shard " << i;
  }
  EXPECT_LE(tree->ReservedBytes(), tree->file().size());
}

// Fork support in one process: CopyTo under LockAll, then Adopt the copy as a child would.
TYPED_TEST(ShardedTreeTest, CopyToThenAdoptMovesTheTreeToTheNewFile) {
  TempDir parent_dir, child_dir;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(parent_dir.fd(), "heap.tree", 4, 12));
  for (uint64_t i = 0; i < 3000; ++i)
    ASSERT_TRUE(tree->Insert(ShardTestBlock(0x10000 + i * 32, i)));
  for (uint64_t i = 0; i < 3000; i += 2) ASSERT_TRUE(tree->Remove(0x10000 + i * 32, nullptr));
  uint64_t count = tree->LiveCount(), bytes = tree->LiveBytes();
  const std::string old_path = parent_dir.path() + "/heap.tree";
  const std::string new_path = child_dir.path() + "/heap.tree";
  uint8_t* data = tree->file().data();

  tree->LockAll();
  ASSERT_TRUE(tree->CopyTo(child_dir.fd(), "heap.tree"));
  // The copy is the locked state byte for byte (the rest of both files is zero).
  std::string old_bytes = ReadWholeFile(old_path);
  EXPECT_TRUE(old_bytes == ReadWholeFile(new_path));
  struct stat st;
  ASSERT_EQ(0, stat(new_path.c_str(), &st));
  EXPECT_GE(uint64_t(st.st_blocks) * 512, tree->ReservedBytes()) << "copied ranges are reserved";

  ASSERT_TRUE(tree->Adopt(child_dir.fd(), "heap.tree"));
  tree->ReleaseCopiedLocks();
  EXPECT_EQ(data, tree->file().data()) << "the mapping stays at the same address";
  EXPECT_EQ(count, tree->LiveCount());
  EXPECT_EQ(bytes, tree->LiveBytes());
  for (uint32_t i = 0; i < tree->shard_count(); ++i) {
    EXPECT_EQ(0u, tree->shard(i).header()->lock.load()) << i;
  }

  // Changes after Adopt reach only the new file.
  for (uint64_t i = 0; i < 3000; i += 2)
    ASSERT_TRUE(tree->Insert(ShardTestBlock(0x10000 + i * 32, 1)));
  for (uint64_t i = 1; i < 1000; i += 2) ASSERT_TRUE(tree->Remove(0x10000 + i * 32, nullptr));
  EXPECT_TRUE(old_bytes == ReadWholeFile(old_path)) << "the old file was written after Adopt";
  std::string new_bytes = ReadWholeFile(new_path);
  EXPECT_EQ(0, memcmp(new_bytes.data(), tree->file().data(), new_bytes.size()));
  EXPECT_EQ(count + 1500 - 500, tree->LiveCount());
}

TYPED_TEST(ShardedTreeTest, CopyToAnExistingFileFails) {
  TempDir dir;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 2, 10));
  ASSERT_TRUE(tree->Insert(ShardTestBlock(0x1000, 1)));
  EXPECT_FALSE(tree->CopyTo(dir.fd(), "heap.tree"));
  ASSERT_TRUE(tree->Insert(ShardTestBlock(0x2000, 2)));
  std::string bytes = ReadWholeFile(dir.path() + "/heap.tree");
  EXPECT_EQ(0, memcmp(bytes.data(), tree->file().data(), bytes.size()));
  EXPECT_EQ(2u, tree->LiveCount());
}

TYPED_TEST(ShardedTreeTest, AdoptOfAMissingFileFailsAndKeepsTheOldFile) {
  TempDir dir, other;
  auto tree = NewTree<TypeParam>();
  ASSERT_TRUE(tree->Create(dir.fd(), "heap.tree", 2, 10));
  EXPECT_FALSE(tree->Adopt(other.fd(), "heap.tree"));
  ASSERT_TRUE(tree->Insert(ShardTestBlock(0x1000, 1)));
  std::string bytes = ReadWholeFile(dir.path() + "/heap.tree");
  EXPECT_EQ(0, memcmp(bytes.data(), tree->file().data(), bytes.size()));
}

// A complete recording directory (heap.tree, stacks, modules), as RecordingReader requires.
template <typename Tree>
class TreeRecording {
 public:
  explicit TreeRecording(const TempDir& dir) : dir_(dir) {}
  ~TreeRecording() { stacks_.Unmap(); }

  void Create(uint32_t shards) {
    ASSERT_TRUE(tree_->Create(dir_.fd(), format::kHeapTreeFile, shards, 12));
    ASSERT_TRUE(stacks_.Create(dir_.fd(), format::kStackFile, 12, 16));
    ASSERT_TRUE(modules_.Create(dir_.fd(), format::kModuleFile));
  }
  // The parent side of a fork: what the recorder puts in the child's directory before fork().
  void CopyForFork(const TempDir& child) {
    tree_->LockAll();
    modules_.Lock();
    ASSERT_TRUE(tree_->CopyTo(child.fd(), format::kHeapTreeFile));
    ASSERT_TRUE(modules_.CopyTo(child.fd(), format::kModuleFile));
    ASSERT_TRUE(stacks_.LinkInto(dir_.fd(), child.fd(), format::kStackFile));
    modules_.Unlock();
    tree_->UnlockAll();
  }

  Tree& tree() { return *tree_; }
  StackStore& stacks() { return stacks_; }

 private:
  const TempDir& dir_;
  std::unique_ptr<Tree> tree_ = NewTree<Tree>();
  StackStore stacks_;
  ModuleMap modules_;
};

void ExpectReaderSees(const std::string& directory, const std::map<uint64_t, BlockRecord>& model,
                      uint32_t shards) {
  RecordingReader reader(directory);
  EXPECT_TRUE(reader.torn().empty());
  std::vector<LiveBlock> blocks = reader.blocks();
  std::sort(blocks.begin(), blocks.end(),
            [](const LiveBlock& a, const LiveBlock& b) { return a.address < b.address; });
  ASSERT_EQ(model.size(), blocks.size());
  auto it = model.begin();
  for (const LiveBlock& b : blocks) {
    const BlockRecord& expected = (it++)->second;
    EXPECT_EQ(expected.address, b.address);
    EXPECT_EQ(expected.size, b.size);
    EXPECT_EQ(expected.stack, b.stack);
    EXPECT_EQ(expected.seq, b.seq);
    EXPECT_EQ(expected.function, b.function);
    EXPECT_EQ((b.address >> 12) & (shards - 1), b.shard);
    EXPECT_EQ(TreeKind::kHeap, b.tree);
  }
  uint64_t bytes = 0;
  for (const auto& [address, block] : model) bytes += block.size;
  EXPECT_EQ(bytes, reader.live_bytes());
  uint64_t count = 0, counted_bytes = 0;
  for (const ShardStats& s : reader.shards()) {
    count += s.live_count;
    counted_bytes += s.live_bytes;
  }
  EXPECT_EQ(model.size(), count);
  EXPECT_EQ(bytes, counted_bytes);
}

TYPED_TEST(ShardedTreeTest, RecordingReaderSeesTheSameBlocks) {
  TempDir dir;
  TreeRecording<TypeParam> recording(dir);
  ASSERT_NO_FATAL_FAILURE(recording.Create(8));
  const uintptr_t stack_a[] = {0x5555'0000'1234, 0x5555'0000'2000, 0x7f12'3456'7000};
  const uintptr_t stack_b[] = {0x5555'0000'1240, 0x5555'0000'2000, 0x7f12'3456'7000};
  uint32_t a = recording.stacks().Intern(stack_a, 3);
  uint32_t b = recording.stacks().Intern(stack_b, 3);
  ASSERT_NE(0u, a);
  ASSERT_NE(0u, b);

  std::map<uint64_t, BlockRecord> model;
  const AllocFunction functions[] = {AllocFunction::kMalloc, AllocFunction::kCalloc,
                                     AllocFunction::kRealloc, AllocFunction::kMemalign,
                                     AllocFunction::kValloc};
  for (uint32_t i = 0; i < 2000; ++i) {
    BlockRecord block = ShardTestBlock(0x5555'6000'0000 + i * 0x90, i * 7 + 1, i % 2 ? a : b,
                                       i * 11, functions[i % 5]);
    ASSERT_TRUE(recording.tree().Insert(block));
    model[block.address] = block;
  }
  for (uint32_t i = 0; i < 2000; i += 5) {
    uint64_t address = 0x5555'6000'0000 + i * 0x90;
    ASSERT_TRUE(recording.tree().Remove(address, nullptr));
    model.erase(address);
  }
  ASSERT_NO_FATAL_FAILURE(ExpectReaderSees(dir.path(), model, 8));

  RecordingReader reader(dir.path());
  EXPECT_EQ(std::vector<uint64_t>(std::begin(stack_a), std::end(stack_a)), reader.Frames(a));
  EXPECT_EQ(std::vector<uint64_t>(std::begin(stack_b), std::end(stack_b)), reader.Frames(b));
}

// The real fork sequence: the parent copies under the locks and forks; the child adopts the copy,
// releases the copied locks and goes on alone. Each directory then reads back as its own process.
TYPED_TEST(ShardedTreeTest, ForkedChildWritesOnlyItsOwnCopy) {
  TempDir parent_dir, child_dir;
  TreeRecording<TypeParam> parent(parent_dir);
  ASSERT_NO_FATAL_FAILURE(parent.Create(4));
  std::map<uint64_t, BlockRecord> model;
  for (uint32_t i = 0; i < 500; ++i) {
    BlockRecord block = ShardTestBlock(0x7000'0000 + i * 0x400, i + 1, 0, i);
    ASSERT_TRUE(parent.tree().Insert(block));
    model[block.address] = block;
  }
  std::map<uint64_t, BlockRecord> parent_model = model, child_model = model;
  for (uint32_t i = 0; i < 500; i += 2) child_model.erase(0x7000'0000 + i * 0x400);
  BlockRecord child_block = ShardTestBlock(0x7100'0000, 4242, 0, 9999, AllocFunction::kCalloc);
  child_model[child_block.address] = child_block;

  ASSERT_NO_FATAL_FAILURE(parent.CopyForFork(child_dir));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    TypeParam& tree = parent.tree();
    if (!tree.Adopt(child_dir.fd(), format::kHeapTreeFile)) _exit(10);
    tree.ReleaseCopiedLocks();
    for (uint32_t i = 0; i < 500; i += 2) {
      if (!tree.Remove(0x7000'0000 + i * 0x400, nullptr)) _exit(11);
    }
    if (!tree.Insert(child_block)) _exit(12);
    _exit(0);
  }
  // Meanwhile the parent frees a block of its own.
  ASSERT_TRUE(parent.tree().Remove(0x7000'0000 + 1 * 0x400, nullptr));
  parent_model.erase(0x7000'0000 + 1 * 0x400);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(0, WEXITSTATUS(status));

  ASSERT_NO_FATAL_FAILURE(ExpectReaderSees(child_dir.path(), child_model, 4));
  ASSERT_NO_FATAL_FAILURE(ExpectReaderSees(parent_dir.path(), parent_model, 4));
  EXPECT_EQ(parent_model.size(), parent.tree().LiveCount());
}

}  // namespace
}  // namespace heapgraph
