// tests/heap: StackStore: exact read-back, suffix sharing, a synthetic workload's cost per stack,
// concurrent interning (across the index's level switch), a full table (also with two levels),
// unrepresentable frames, fork sharing, disk that grows with the nodes stored, a full disk, and the
// file as RecordingReader reads it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/StackStore.h"
#include "reader/RecordingReader.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using Stack = std::vector<uintptr_t>;  // innermost first, as Intern takes it

class StackStoreTest : public testing::Test {
 protected:
  void TearDown() override { store_.Unmap(); }

  void Create(uint32_t slot_bits, uint32_t max_depth = format::kMaxStackDepth) {
    ASSERT_TRUE(store_.Create(dir_.fd(), format::kStackFile, slot_bits, max_depth));
  }

  uint32_t Intern(const Stack& stack, uint32_t* new_nodes = nullptr) {
    return store_.Intern(stack.data(), static_cast<uint32_t>(stack.size()), new_nodes);
  }

  // Interns the one-frame stacks first + 16 i, i = 0, 1, ..., until the table refuses one.
  void FillWithSingleFrames(uintptr_t first, std::vector<uint32_t>* ids) {
    for (uintptr_t i = 0;; ++i) {
      uint32_t id = Intern({first + i * 16});
      if (id == 0) return;
      ids->push_back(id);
      ASSERT_LT(i, store_.slot_count());
    }
  }

  Stack Frames(uint32_t id) {
    Stack out(format::kMaxStackDepth + 8);
    out.resize(store_.Frames(id, out.data(), static_cast<uint32_t>(out.size())));
    return out;
  }

  // heap.tree and modules beside the stack table, so RecordingReader accepts the directory.
  void MakeReadable() {
    tree_ = std::make_unique<LiveAllocationTree>();
    ASSERT_TRUE(tree_->Create(dir_.fd(), format::kHeapTreeFile, 1, 10));
    ASSERT_TRUE(modules_.Create(dir_.fd(), format::kModuleFile, 4));
  }

  TempDir dir_;
  StackStore store_;
  std::unique_ptr<LiveAllocationTree> tree_;
  ModuleMap modules_;
};

// A program-like address: the executable's text, or a shared library's.
constexpr uintptr_t kExe = 0x5555'5555'0000;
constexpr uintptr_t kLib = 0x7f3a'1200'0000;

// Runs body(t), t = 0 .. threads-1, on threads that start together; returns when all are done.
void RunTogether(int threads, const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread& thread : running) thread.join();
}

TEST_F(StackStoreTest, CreateWritesAValidHeader) {
  ASSERT_NO_FATAL_FAILURE(Create(12, 24));
  EXPECT_EQ(4096u, store_.slot_count());
  EXPECT_EQ(StackStore::FileSize(12), store_.file().size());
  format::StackHeader h;
  ASSERT_EQ(ssize_t(sizeof(h)), pread(store_.file().fd(), &h, sizeof(h), 0));
  EXPECT_EQ(0, memcmp(h.file.magic, format::kStackMagic, 8));
  EXPECT_EQ(format::kVersion, h.file.version);
  EXPECT_EQ(12u, h.slot_bits);
  EXPECT_EQ(24u, h.max_depth);
  EXPECT_EQ(h.slots_offset, h.file.header_size);
  EXPECT_EQ(0u, h.slots_offset % format::kPageSize);
  EXPECT_EQ(1u, h.prefix_count.load());
  EXPECT_EQ(0u, store_.node_count());
  EXPECT_EQ(0u, store_.stack_count());
  EXPECT_EQ(0u, store_.dropped());
}

TEST_F(StackStoreTest, CreateRefusesMoreSlotBitsThanParentIndicesHold) {
  EXPECT_FALSE(store_.Create(dir_.fd(), "too-big", format::kStackParentBits + 1, 32));
}

TEST_F(StackStoreTest, InternedStackReadsBackInnermostFirst) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  Stack stack = {kExe + 0x1234, kExe + 0x2000, kLib + 0x10, kLib + 0x0fff'fff0, kExe};
  uint32_t new_nodes = 99;
  uint32_t id = Intern(stack, &new_nodes);
  ASSERT_NE(0u, id);
  EXPECT_EQ(stack.size(), new_nodes);
  EXPECT_EQ(stack, Frames(id));
  EXPECT_EQ(stack.size(), store_.node_count());
  EXPECT_EQ(1u, store_.stack_count());
}

TEST_F(StackStoreTest, FramesStopsAtTheCapacityGiven) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  Stack stack = {kExe + 1, kExe + 2, kExe + 3, kExe + 4};
  uint32_t id = Intern(stack);
  uintptr_t out[2] = {};
  ASSERT_EQ(2u, store_.Frames(id, out, 2));
  EXPECT_EQ(kExe + 1, out[0]);
  EXPECT_EQ(kExe + 2, out[1]);
  EXPECT_EQ(0u, store_.Frames(0, out, 2));
  EXPECT_EQ(0u, store_.Frames(id, out, 0));
}

TEST_F(StackStoreTest, EmptyStackIsIdZero) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  uint32_t new_nodes = 99;
  EXPECT_EQ(0u, store_.Intern(nullptr, 0, &new_nodes));
  EXPECT_EQ(0u, new_nodes);
  EXPECT_EQ(0u, store_.node_count());
  EXPECT_EQ(0u, store_.dropped());
}

TEST_F(StackStoreTest, IdenticalStacksGetTheSameIdAndNoNewNodes) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  Stack stack = {kExe + 0x40, kExe + 0x80, kLib + 0xc0};
  uint32_t first = Intern(stack);
  uint32_t new_nodes = 99;
  EXPECT_EQ(first, Intern(stack, &new_nodes));
  EXPECT_EQ(0u, new_nodes);
  EXPECT_EQ(3u, store_.node_count());
  EXPECT_EQ(1u, store_.stack_count());
}

TEST_F(StackStoreTest, OrderOfFramesMatters) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  uint32_t a = Intern({kExe + 1, kExe + 2});
  uint32_t b = Intern({kExe + 2, kExe + 1});
  EXPECT_NE(a, b);
  EXPECT_EQ((Stack{kExe + 2, kExe + 1}), Frames(b));
}

TEST_F(StackStoreTest, StacksSharingOuterFramesShareTheirNodes) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  Stack outer = {kExe + 0x100, kExe + 0x200, kExe + 0x300, kLib + 0x400};
  Stack a = {kExe + 0xa0, kExe + 0xa1, kExe + 0xa2};
  a.insert(a.end(), outer.begin(), outer.end());
  Stack b = {kExe + 0xb0};
  b.insert(b.end(), outer.begin(), outer.end());

  uint32_t new_nodes = 0;
  uint32_t id_a = Intern(a, &new_nodes);
  EXPECT_EQ(7u, new_nodes);
  uint32_t id_b = Intern(b, &new_nodes);
  EXPECT_EQ(1u, new_nodes) << "only the differing innermost frame is new";
  EXPECT_EQ(8u, store_.node_count());
  EXPECT_EQ(2u, store_.stack_count());
  EXPECT_EQ(a, Frames(id_a));
  EXPECT_EQ(b, Frames(id_b));

  // The shared outer part on its own is already stored: the id of its innermost node.
  uint32_t id_outer = Intern(outer, &new_nodes);
  EXPECT_EQ(0u, new_nodes);
  EXPECT_EQ(outer, Frames(id_outer));
  EXPECT_EQ(2u, store_.stack_count()) << "no new innermost node, so no new stack";
}

TEST_F(StackStoreTest, StacksDifferingOnlyOutsideShareNothingInside) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  uint32_t new_nodes = 0;
  Intern({kExe + 1, kExe + 2, kExe + 3}, &new_nodes);
  Intern({kExe + 1, kExe + 2, kExe + 4}, &new_nodes);
  EXPECT_EQ(3u, new_nodes) << "a different outermost frame makes every inner node different";
}

// 10k distinct 35-frame stacks: a common 30-frame outer part (start-up, main loop, dispatch) and
// 5 inner frames branching like a call tree: 10 handlers, 10 helpers each, 10 callees each, 10
// allocating call sites each (10^4 leaves), and the innermost frame inside each leaf.
TEST_F(StackStoreTest, SyntheticCallTreeWorkloadCostPerStack) {
  ASSERT_NO_FATAL_FAILURE(Create(16));
  constexpr int kOuter = 30, kFanout = 10, kStacks = kFanout * kFanout * kFanout * kFanout;
  Stack outer(kOuter);  // innermost first
  for (int level = 0; level < kOuter; ++level) {
    outer[kOuter - 1 - level] = (level < 5 ? kLib : kExe) + 0x1000 * level + 0x37;
  }
  std::vector<Stack> stacks;
  for (int leaf = 0; leaf < kStacks; ++leaf) {
    int path[4] = {leaf / (kFanout * kFanout * kFanout), leaf / (kFanout * kFanout) % kFanout,
                   leaf / kFanout % kFanout, leaf % kFanout};
    Stack s(5);
    for (int level = 0; level < 4; ++level) {
      s[4 - level] = kExe + 0x10'0000 * (level + 1) + path[level] * 0x40 + 0x11;
    }
    s[0] = kExe + 0x80'0000 + path[3] * 0x20 + 0x9;  // the malloc call inside the leaf function
    s.insert(s.end(), outer.begin(), outer.end());
    stacks.push_back(s);
  }
  std::shuffle(stacks.begin(), stacks.end(), std::mt19937(35));

  uint64_t new_nodes_total = 0;
  std::vector<uint32_t> ids;
  for (const Stack& s : stacks) {
    uint32_t new_nodes = 0;
    ids.push_back(Intern(s, &new_nodes));
    ASSERT_NE(0u, ids.back());
    new_nodes_total += new_nodes;
  }
  const uint64_t expected_nodes =
      kOuter + kFanout + kFanout * kFanout + kFanout * kFanout * kFanout + 2 * kStacks;
  EXPECT_EQ(expected_nodes, store_.node_count());
  EXPECT_EQ(uint64_t{kStacks}, store_.stack_count());
  EXPECT_EQ(new_nodes_total, store_.node_count());
  EXPECT_EQ(0u, store_.dropped());
  for (size_t i = 0; i < stacks.size(); ++i) ASSERT_EQ(stacks[i], Frames(ids[i])) << i;
  for (size_t i = 0; i < stacks.size(); ++i) {
    uint32_t new_nodes = 99;
    ASSERT_EQ(ids[i], Intern(stacks[i], &new_nodes));
    ASSERT_EQ(0u, new_nodes);
  }
  std::vector<uint32_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted.end(), std::adjacent_find(sorted.begin(), sorted.end()));

  double nodes_per_stack = static_cast<double>(new_nodes_total) / kStacks;
  double bytes_per_stack = static_cast<double>(store_.node_count() * 8) / store_.stack_count();
  double load = static_cast<double>(store_.node_count()) / store_.slot_count();
  printf(
      "[ figure   ] stacks: %d distinct %zu-frame stacks -> %.3f new nodes/stack, %.2f bytes "
      "per unique stack (node_count*8/stack_count; the raw frames would take %zu bytes); "
      "table load %.1f%% of %llu slots (%.2f table bytes/stack at this size, usable to 90%%)\n",
      kStacks, stacks[0].size(), nodes_per_stack, bytes_per_stack, stacks[0].size() * 8, 100 * load,
      static_cast<unsigned long long>(store_.slot_count()),
      static_cast<double>(store_.slot_count() * 8) / store_.stack_count());
  EXPECT_LT(nodes_per_stack, 2.2);
}

TEST_F(StackStoreTest, ConcurrentInterningGivesOneIdPerStack) {
  ASSERT_NO_FATAL_FAILURE(Create(16));
  constexpr int kThreads = 4, kStacks = 4000, kPerThread = 2500;
  std::vector<Stack> stacks;
  for (int i = 0; i < kStacks; ++i) {
    // Shared outer frames, a branching middle, and a distinct innermost frame.
    Stack s = {kExe + 0x100000 + i * 8, kExe + 0x200000 + (i % 50) * 8,
               kLib + 0x300000 + (i % 7) * 8, kExe + 0x40, kExe + 0x20};
    stacks.push_back(s);
  }
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kStacks, 0));
  RunTogether(kThreads, [&](int t) {
    // Overlapping windows of the set, walked in opposite directions by odd and even threads.
    for (int k = 0; k < kPerThread; ++k) {
      int i = (t * 1000 + (t % 2 ? kPerThread - 1 - k : k)) % kStacks;
      ids[t][i] = Intern(stacks[i]);
    }
  });

  std::map<uint32_t, int> owner;
  for (int i = 0; i < kStacks; ++i) {
    uint32_t id = 0;
    for (int t = 0; t < kThreads; ++t) {
      if (ids[t][i] == 0) continue;
      if (id == 0) id = ids[t][i];
      ASSERT_EQ(id, ids[t][i]) << "stack " << i << " thread " << t;
    }
    ASSERT_NE(0u, id) << "stack " << i << " was interned by nobody";
    ASSERT_TRUE(owner.emplace(id, i).second) << "stacks " << owner[id] << " and " << i;
    ASSERT_EQ(stacks[i], Frames(id));
  }
  EXPECT_EQ(uint64_t{kStacks}, store_.stack_count());
  EXPECT_EQ(0u, store_.dropped());

  // The same set interned by one thread takes exactly as many nodes.
  TempDir other;
  StackStore serial;
  ASSERT_TRUE(serial.Create(other.fd(), format::kStackFile, 16, 64));
  for (const Stack& s : stacks) serial.Intern(s.data(), static_cast<uint32_t>(s.size()));
  EXPECT_EQ(serial.node_count(), store_.node_count());
  serial.Unmap();
}

// The smallest table the reader accepts (slot_bits 10; Create itself checks only the maximum).
TEST_F(StackStoreTest, FullTableReturnsZeroAndCountsDropped) {
  ASSERT_NO_FATAL_FAILURE(Create(10));
  const uint64_t max_nodes = 1024 / 10 * 9;  // refused past 90% fill
  std::vector<uint32_t> ids;
  ASSERT_NO_FATAL_FAILURE(FillWithSingleFrames(kExe, &ids));
  EXPECT_EQ(max_nodes, ids.size());
  EXPECT_EQ(max_nodes, store_.node_count());
  EXPECT_EQ(1u, store_.dropped());

  // Known stacks still resolve; a new one built on known frames stops at the first new node.
  EXPECT_EQ(ids[5], Intern({kExe + 5 * 16}));
  uint32_t new_nodes = 99;
  EXPECT_EQ(0u, Intern({kExe + 0xdead0, kExe + 7 * 16}, &new_nodes));
  EXPECT_EQ(0u, new_nodes);
  EXPECT_EQ(2u, store_.dropped());
  EXPECT_EQ(max_nodes, store_.node_count());
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(Stack{kExe + i * 16}, Frames(ids[i]));
}

// slot_bits 16: the index's levels of 2^10, 2^13 and 2^16 slots. Every node stays findable when
// new ones go to the next level, and the table still takes 90% of 2^16 nodes, as one level did.
TEST_F(StackStoreTest, GrowingIndexKeepsTheFullCapacity) {
  ASSERT_NO_FATAL_FAILURE(Create(16));
  const uint64_t max_nodes = 65536 / 10 * 9;
  std::vector<uint32_t> ids;
  ASSERT_NO_FATAL_FAILURE(FillWithSingleFrames(kExe, &ids));
  EXPECT_EQ(max_nodes, ids.size());
  EXPECT_EQ(1u, store_.dropped());
  for (size_t i = 0; i < ids.size(); ++i) {
    uint32_t new_nodes = 99;
    ASSERT_EQ(ids[i], Intern({kExe + i * 16}, &new_nodes)) << i;
    ASSERT_EQ(0u, new_nodes);
  }
}

// Threads interning the same single-frame stacks at once, through the switches to the second and
// third levels (at 512 and 4,096 entries, half of the first two), 100 times: each node is
// published once, whatever level each thread thought was current (without the closing of older
// levels' chain ends this failed in each of 3 runs).
TEST_F(StackStoreTest, ConcurrentInterningAcrossTheLevelSwitchGivesOneIdPerNode) {
  constexpr int kThreads = 4, kStacks = 4400, kRounds = 100;
  for (int round = 0; round < kRounds; ++round) {
    TempDir dir;
    StackStore store;
    ASSERT_TRUE(store.Create(dir.fd(), format::kStackFile, 16, 64));
    std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kStacks, 0));
    RunTogether(kThreads, [&](int t) {
      for (int i = 0; i < kStacks; ++i) {
        uintptr_t frame = kExe + static_cast<uintptr_t>(i) * 16;
        ids[t][i] = store.Intern(&frame, 1);
      }
    });
    for (int i = 0; i < kStacks; ++i) {
      ASSERT_NE(0u, ids[0][i]);
      for (int t = 1; t < kThreads; ++t) ASSERT_EQ(ids[0][i], ids[t][i]) << i << " " << t;
    }
    EXPECT_EQ(uint64_t{kStacks}, store.node_count());
    EXPECT_EQ(0u, store.dropped());
    store.Unmap();
  }
}

TEST_F(StackStoreTest, FramesAbove48BitsAreSkippedWithoutCorruptingTheStack) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  const uintptr_t kernel = 0xffff'ffff'8100'0000;
  const uintptr_t bit48 = uintptr_t{1} << 48;
  uint32_t new_nodes = 0;
  uint32_t id = Intern({kernel, kExe + 0x10, bit48 | 0x20, kExe + 0x30}, &new_nodes);
  ASSERT_NE(0u, id);
  EXPECT_EQ(2u, new_nodes);
  EXPECT_EQ((Stack{kExe + 0x10, kExe + 0x30}), Frames(id));
  EXPECT_EQ(id, Intern({kExe + 0x10, kExe + 0x30}));

  // Only unrepresentable frames: no stack, and nothing stored or counted.
  EXPECT_EQ(0u, Intern({kernel, bit48}));
  EXPECT_EQ(2u, store_.node_count());
  EXPECT_EQ(0u, store_.dropped());
  format::StackHeader h;
  ASSERT_EQ(ssize_t(sizeof(h)), pread(store_.file().fd(), &h, sizeof(h), 0));
  EXPECT_EQ(2u, h.prefix_count.load()) << "one prefix (kExe's 256 MiB window) in use";
}

TEST_F(StackStoreTest, AddressesUpTo48BitsKeepEveryBit) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  Stack stack = {(uintptr_t{1} << 48) - 1, 1, 0, 0x0fff'ffff, 0x1000'0000, 0x7fff'ffff'f000};
  uint32_t id = Intern(stack);
  EXPECT_EQ(stack, Frames(id));
}

TEST_F(StackStoreTest, FramesBeyondThePrefixTableAreSkipped) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  // Each 256 MiB window needs a prefix; 255 are available (index 0 is reserved).
  std::vector<uint32_t> ids;
  for (uintptr_t window = 1; window <= 300; ++window) {
    ids.push_back(Intern({(window << format::kStackLowBits) | 0x40}));
  }
  for (uintptr_t window = 1; window <= 255; ++window) {
    ASSERT_NE(0u, ids[window - 1]) << window;
    ASSERT_EQ(Stack{(window << format::kStackLowBits) | 0x40}, Frames(ids[window - 1]));
  }
  for (size_t i = 255; i < ids.size(); ++i) EXPECT_EQ(0u, ids[i]) << i;
  EXPECT_EQ(255u, store_.node_count());
}

TEST_F(StackStoreTest, RecordingReaderDecodesEveryStack) {
  ASSERT_NO_FATAL_FAILURE(Create(12, 16));
  ASSERT_NO_FATAL_FAILURE(MakeReadable());
  std::mt19937_64 random(5);
  std::vector<std::pair<uint32_t, Stack>> stacks;
  for (int i = 0; i < 200; ++i) {
    Stack s(1 + i % 16);
    for (uintptr_t& frame : s) frame = (random() % 2 ? kExe : kLib) + random() % 0x100000;
    stacks.emplace_back(Intern(s), s);
  }
  RecordingReader reader(dir_.path());
  EXPECT_EQ(store_.node_count(), reader.stack_stats().node_count);
  EXPECT_EQ(store_.stack_count(), reader.stack_stats().stack_count);
  EXPECT_EQ(store_.slot_count(), reader.stack_stats().slots);
  EXPECT_EQ(16u, reader.stack_stats().max_depth);
  for (const auto& [id, s] : stacks) {
    ASSERT_EQ(std::vector<uint64_t>(s.begin(), s.end()), reader.Frames(id)) << id;
  }
}

// BUG: Intern stores as many frames as it is given, but the header promises readers chains of at
// most max_depth (RecordingReader treats a longer chain as a cycle). The recorder can exceed it:
// heapgraph_set_options("depth=N") raises the capture depth above the `depth` the stack file was
// created with. A stack longer than max_depth must be cut (or refused), never stored whole.
TEST_F(StackStoreTest, NoStoredStackIsLongerThanMaxDepth) {
  ASSERT_NO_FATAL_FAILURE(Create(12, 8));
  ASSERT_NO_FATAL_FAILURE(MakeReadable());
  Stack deep;
  for (uintptr_t i = 0; i < 12; ++i) deep.push_back(kExe + 0x100 * i);
  uint32_t id = Intern(deep);
  Stack stored = Frames(id);
  EXPECT_LE(stored.size(), 8u);
  EXPECT_TRUE(std::equal(stored.begin(), stored.end(), deep.begin()))
      << "whatever is kept must be the innermost frames";
  RecordingReader reader(dir_.path());
  EXPECT_NO_THROW(reader.Frames(id));
}

// BUG: Create checks only the largest slot_bits. slot_bits 0 makes FirstSlot shift a 64-bit value
// by 64 (undefined), and any slot_bits below 10 or max_depth above 64 gives a file that
// RecordingReader refuses as corrupt.
TEST_F(StackStoreTest, CreateRefusesATableTheReaderWouldReject) {
  EXPECT_FALSE(store_.Create(dir_.fd(), "zero", 0, 32));
  EXPECT_FALSE(store_.Create(dir_.fd(), "nine", 9, 32));
  EXPECT_FALSE(store_.Create(dir_.fd(), "deep", 12, format::kMaxStackDepth + 1));
}

// Fork: the child's directory gets a hard link to the same table, and both processes keep
// interning into it; a prefix added by one is found (not duplicated) by the other.
TEST_F(StackStoreTest, ForkedChildSharesTheTableThroughTheLink) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  uint32_t before = Intern({kExe + 0x10, kExe + 0x20});
  TempDir child_dir;
  ASSERT_TRUE(store_.LinkInto(dir_.fd(), child_dir.fd(), format::kStackFile));
  struct stat a, b;
  ASSERT_EQ(0, fstatat(dir_.fd(), format::kStackFile, &a, 0));
  ASSERT_EQ(0, fstatat(child_dir.fd(), format::kStackFile, &b, 0));
  EXPECT_EQ(a.st_ino, b.st_ino);

  const Stack child_stack = {kLib + 0x99, kExe + 0x20};  // kLib: a prefix new to both
  int pipe_fds[2];
  ASSERT_EQ(0, pipe(pipe_fds));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    uint32_t id = Intern(child_stack);
    bool ok = write(pipe_fds[1], &id, sizeof(id)) == sizeof(id);
    _exit(ok && Intern({kExe + 0x10, kExe + 0x20}) == before ? 0 : 1);
  }
  close(pipe_fds[1]);
  uint32_t child_id = 0;
  ASSERT_EQ(ssize_t(sizeof(child_id)), read(pipe_fds[0], &child_id, sizeof(child_id)));
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  ASSERT_NE(0u, child_id);
  EXPECT_EQ(child_stack, Frames(child_id)) << "the child's node is visible to the parent";
  uint32_t new_nodes = 99;
  EXPECT_EQ(child_id, Intern(child_stack, &new_nodes));
  EXPECT_EQ(0u, new_nodes);
  format::StackHeader h;
  ASSERT_EQ(ssize_t(sizeof(h)), pread(store_.file().fd(), &h, sizeof(h), 0));
  EXPECT_EQ(3u, h.prefix_count.load()) << "kExe and kLib, each once";
  EXPECT_EQ(0u, h.prefix_lock.load());
}

// Issue 14: a recording takes disk with what it stored (8 bytes a node, reserved ahead by a
// quarter, in pages), not the whole table: a short-lived process's table is a few KiB.
TEST_F(StackStoreTest, DiskGrowsWithTheNodesStored) {
  ASSERT_NO_FATAL_FAILURE(Create(22));  // the default: a 32 MiB table
  auto allocated = [&] {
    struct stat st;
    EXPECT_EQ(0, fstat(store_.file().fd(), &st));
    return static_cast<uint64_t>(st.st_blocks) * 512;
  };
  EXPECT_LE(allocated(), 8192u) << "only the header";
  for (uintptr_t i = 0; i < 100; ++i) ASSERT_NE(0u, Intern({kExe + i * 16, kLib}));
  EXPECT_LE(allocated(), 16384u);
  EXPECT_GE(store_.ReservedBytes(), 4096u + 101 * 8);
  for (uintptr_t i = 0; i < 100000; ++i) ASSERT_NE(0u, Intern({kExe + i * 16, kExe}));
  uint64_t nodes_bytes = store_.node_count() * 8;
  EXPECT_LE(store_.ReservedBytes(), 4096 + nodes_bytes * 5 / 4 + 2 * 4096);
  EXPECT_LE(allocated(), 4096 + nodes_bytes * 5 / 4 + 64 * 1024);
  printf("[ figure   ] stacks: %llu nodes -> %llu bytes allocated on disk (table of %llu MiB)\n",
         static_cast<unsigned long long>(store_.node_count()),
         static_cast<unsigned long long>(allocated()),
         static_cast<unsigned long long>(StackStore::FileSize(22) >> 20));
}

// Issue 14: on a full file system new nodes are dropped (Intern returns 0, `dropped` counts them)
// and the process never gets SIGBUS; stacks stored before still read back. Runs in a child in its
// own user and mount namespaces, with the table on a 64 KiB tmpfs.
TEST_F(StackStoreTest, FullDiskDropsStacksInsteadOfRaisingSigbus) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(77);
    auto write_file = [](const char* path, const std::string& text) {
      int fd = open(path, O_WRONLY);
      bool ok = fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size());
      if (fd >= 0) close(fd);
      return ok;
    };
    write_file("/proc/self/setgroups", "deny");
    if (!write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1") ||
        mount("none", dir_.path().c_str(), "tmpfs", 0, "size=64k") != 0) {
      _exit(77);
    }
    int fd = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
    StackStore small;
    if (!small.Create(fd, format::kStackFile, 16, 64)) _exit(2);
    std::vector<std::pair<uint32_t, uintptr_t>> stored;
    uint32_t refused = 0;
    for (uintptr_t i = 0; i < 20000; ++i) {
      uintptr_t frame = kExe + i * 16;
      uint32_t id = small.Intern(&frame, 1);
      if (id == 0) {
        ++refused;
      } else {
        stored.emplace_back(id, frame);
      }
    }
    for (const auto& [id, frame] : stored) {
      uintptr_t back = 0;
      if (small.Frames(id, &back, 1) != 1 || back != frame) _exit(3);
    }
    if (refused == 0 || stored.size() < 1000 || small.dropped() != refused) _exit(4);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    GTEST_SKIP() << "no user and mount namespaces here";
  }
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(StackStoreTest, LinkIntoFailsWhenTheTargetExists) {
  ASSERT_NO_FATAL_FAILURE(Create(12));
  TempDir other;
  ASSERT_TRUE(store_.LinkInto(dir_.fd(), other.fd(), format::kStackFile));
  EXPECT_FALSE(store_.LinkInto(dir_.fd(), other.fd(), format::kStackFile));
}

}  // namespace
}  // namespace heapgraph
