// tests/heap: SlabShard on a real MappedFile: exact results against a std::map under random
// operations (slots never move; the slot freed last is taken first; the extent grows only when no
// slot below it is free), disk reserved ahead in whole steps, refusal at the maximum capacity,
// removals that name the wrong address, and the `writing` marker left by a killed writer, at
// random points and at every instruction of an insert and a remove (single-stepped under ptrace).
// An owned shard: its owner thread's operations beside other threads' frees and beside Lock()
// holders that freeze it, on real threads; a free beside the owner single-stepped.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "heap/platform/ProcessBarrier.h"
#include "heap/store/FreeSlotStacks.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/SlabShard.h"
#include "tests/TempDir.h"
#include "tests/heap/store/ShardTestBlock.h"

namespace heapgraph {
namespace {

using format::AllocFunction;
using format::HashSlot;

// One shard laid out like heap.tree: the HashShardHeader in page 0, the slot region from page 1.
class SlabShardTest : public testing::Test {
 protected:
  static constexpr uint64_t kSlotsOffset = format::kPageSize;

  void Attach(uint64_t max_capacity) {
    file_.Unmap();
    std::string name = "shard" + std::to_string(files_++);
    ASSERT_TRUE(file_.Create(dir_.fd(), name.c_str(), kSlotsOffset + max_capacity * 24));
    ASSERT_TRUE(file_.Reserve(0, kSlotsOffset));
    header_ = reinterpret_cast<format::HashShardHeader*>(file_.data());
    stacks_.Unmap();
    ASSERT_TRUE(stacks_.Map(1, max_capacity));
    shard_.Attach(header_, reinterpret_cast<HashSlot*>(file_.data() + kSlotsOffset), max_capacity,
                  &file_, kSlotsOffset);
    shard_.UseFreeStack(stacks_.stack(0), stacks_.links(0));
    shard_.Reset();
  }

  void SetUp() override { Attach(uint64_t{1} << 16); }
  void TearDown() override {
    file_.Unmap();
    stacks_.Unmap();
  }

  // The shard's contents must equal `model` (address -> slot, block) exactly.
  void ExpectMatches(const std::map<uint64_t, std::pair<uint32_t, BlockRecord>>& model) {
    std::map<uint64_t, BlockRecord> seen;
    shard_.ForEach([&](const BlockRecord& b) {
      EXPECT_TRUE(seen.emplace(b.address, b).second) << "visited twice: " << b.address;
    });
    ASSERT_EQ(model.size(), seen.size());
    uint64_t bytes = 0;
    for (const auto& [address, entry] : model) {
      const auto& [index, expected] = entry;
      ASSERT_TRUE(shard_.Holds(index, address)) << address;
      const BlockRecord found = SlabShard::ToRecord(shard_.slots()[index]);
      EXPECT_EQ(expected.size, found.size);
      EXPECT_EQ(expected.stack, found.stack);
      EXPECT_EQ(expected.seq, found.seq);
      EXPECT_EQ(expected.function, found.function);
      bytes += expected.size;
    }
    EXPECT_EQ(model.size(), shard_.live_count());
    EXPECT_EQ(bytes, shard_.live_bytes());
    EXPECT_EQ(0u, header_->writing);
    for (uint64_t i = 0; i < shard_.capacity(); ++i) {
      const HashSlot& s = shard_.slots()[i];
      if (s.address == 0) {
        EXPECT_TRUE(s.size_function == 0 && s.stack == 0 && s.seq == 0) << "free slot " << i;
      }
    }
  }

  TempDir dir_;
  int files_ = 0;
  MappedFile file_;
  FreeSlotStacks stacks_;
  format::HashShardHeader* header_ = nullptr;
  SlabShard shard_;
};

TEST_F(SlabShardTest, EmptyShardHasNoSlots) {
  EXPECT_EQ(0u, shard_.capacity());
  EXPECT_EQ(0u, shard_.live_count());
  EXPECT_EQ(0u, header_->backed_bytes);
  EXPECT_FALSE(shard_.Holds(0, 0x1000));
  EXPECT_FALSE(shard_.Remove(0, 0x1000, nullptr));
  uint32_t index;
  EXPECT_FALSE(shard_.Find(0x1000, &index));
  EXPECT_EQ(SlabShard::kNoSlot, shard_.Insert(ShardTestBlock(0, 8)))
      << "address 0 is never a block";
}

TEST_F(SlabShardTest, RandomOperationsMatchAStdMap) {
  std::map<uint64_t, std::pair<uint32_t, BlockRecord>> model;
  std::mt19937_64 rng(17);
  uint64_t peak = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t address = 0x5555'0000'0000 + (rng() % 20000) * 16;
    auto it = model.find(address);
    if (it == model.end() && rng() % 3 != 0) {
      BlockRecord b = ShardTestBlock(address, rng() % 5000 + 1, static_cast<uint32_t>(i), i,
                                     AllocFunction::kCalloc);
      uint32_t index = shard_.Insert(b);
      ASSERT_NE(SlabShard::kNoSlot, index);
      model.emplace(address, std::make_pair(index, b));
    } else if (it != model.end()) {
      BlockRecord removed;
      ASSERT_TRUE(shard_.Remove(it->second.first, address, &removed));
      EXPECT_EQ(it->second.second.size, removed.size);
      EXPECT_EQ(it->second.second.seq, removed.seq);
      EXPECT_FALSE(shard_.Remove(it->second.first, address, nullptr)) << "removed twice";
      model.erase(it);
    }
    if (model.size() > peak) peak = model.size();
    if (i % 20000 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
  EXPECT_EQ(peak, shard_.capacity()) << "the extent grows only when no slot below it is free";
  for (const auto& [address, entry] : model) {
    uint32_t index;
    ASSERT_TRUE(shard_.Find(address, &index));
    EXPECT_EQ(entry.first, index);
  }
}

TEST_F(SlabShardTest, SlotsNeverMoveAndTheSlotFreedLastIsTakenFirst) {
  std::vector<uint32_t> slots;
  for (uint64_t i = 0; i < 100; ++i)
    slots.push_back(shard_.Insert(ShardTestBlock(0x1000 + i * 32, 8)));
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(i, slots[i]) << "the extent grows in order";
  ASSERT_TRUE(shard_.Remove(slots[10], 0x1000 + 10 * 32, nullptr));
  ASSERT_TRUE(shard_.Remove(slots[70], 0x1000 + 70 * 32, nullptr));
  for (uint64_t i = 0; i < 100; ++i) {
    if (i == 10 || i == 70) continue;
    EXPECT_TRUE(shard_.Holds(slots[i], 0x1000 + i * 32)) << "block " << i << " moved";
  }
  EXPECT_EQ(70u, shard_.Insert(ShardTestBlock(0x9000, 8)));
  EXPECT_EQ(10u, shard_.Insert(ShardTestBlock(0x9100, 8)));
  EXPECT_EQ(100u, shard_.Insert(ShardTestBlock(0x9200, 8)));
  EXPECT_EQ(101u, shard_.capacity());
}

TEST_F(SlabShardTest, RemoveAndMarkIgnoredNeedTheBlocksOwnAddress) {
  const uint32_t index = shard_.Insert(ShardTestBlock(0x4000, 40));
  EXPECT_FALSE(shard_.Remove(index, 0x4010, nullptr));
  EXPECT_FALSE(shard_.Remove(index + 1, 0x4000, nullptr));
  EXPECT_FALSE(shard_.Remove(SlabShard::kNoSlot, 0x4000, nullptr));
  EXPECT_FALSE(shard_.MarkIgnored(index, 0x4010));
  EXPECT_EQ(1u, shard_.live_count());
  EXPECT_EQ(40u, shard_.live_bytes());
  EXPECT_FALSE(SlabShard::ToRecord(shard_.slots()[index]).ignored);
  ASSERT_TRUE(shard_.MarkIgnored(index, 0x4000));
  BlockRecord removed;
  ASSERT_TRUE(shard_.Remove(index, 0x4000, &removed));
  EXPECT_TRUE(removed.ignored);
  EXPECT_EQ(40u, removed.size);
  EXPECT_EQ(0u, shard_.live_bytes());
}

TEST_F(SlabShardTest, ReservesDiskAheadInWholeSteps) {
  constexpr uint64_t kPerStep = SlabShard::kReserveStep / sizeof(HashSlot);
  shard_.Insert(ShardTestBlock(0x1000, 8));
  EXPECT_EQ(SlabShard::kReserveStep, header_->backed_bytes);
  for (uint64_t i = 1; i < kPerStep; ++i) shard_.Insert(ShardTestBlock(0x1000 + i * 16, 8));
  EXPECT_EQ(SlabShard::kReserveStep, header_->backed_bytes);
  shard_.Insert(ShardTestBlock(0x100000, 8));
  EXPECT_EQ(2 * SlabShard::kReserveStep, header_->backed_bytes);
}

TEST_F(SlabShardTest, RefusesNewBlocksAtTheMaximumCapacityWithoutCountingThem) {
  Attach(100);
  for (uint64_t i = 0; i < 100; ++i)
    ASSERT_EQ(i, shard_.Insert(ShardTestBlock(0x1000 + i * 16, 8)));
  EXPECT_EQ(SlabShard::kNoSlot, shard_.Insert(ShardTestBlock(0x9000, 8)));
  EXPECT_EQ(0u, header_->dropped) << "the caller may still place it in another shard";
  shard_.CountDropped();
  EXPECT_EQ(1u, header_->dropped);
  EXPECT_LE(header_->backed_bytes, 100 * sizeof(HashSlot)) << "never past the region";
  ASSERT_TRUE(shard_.Remove(42, 0x1000 + 42 * 16, nullptr));
  EXPECT_EQ(42u, shard_.Insert(ShardTestBlock(0x9000, 8)));
}

TEST_F(SlabShardTest, AKilledWriterLeavesOnlyTheMarkedSlotTorn) {
  int marked = 0;
  for (int round = 0; round < 30; ++round) {
    Attach(uint64_t{1} << 18);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<std::pair<uint64_t, uint32_t>> live;
      uint64_t x = 88172645463325252ull + static_cast<uint64_t>(round);
      for (uint64_t i = 0;; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (live.size() < 1000 || (x % 5 < 3 && live.size() < 100000)) {
          uint64_t address = 0x5555'0000'0000 + i * 16;
          live.emplace_back(address, shard_.Insert(ShardTestBlock(address, i % 100 + 1)));
        } else {
          size_t k = x % live.size();
          shard_.Remove(live[k].second, live[k].first, nullptr);
          live[k] = live.back();
          live.pop_back();
        }
      }
    }
    usleep(2000 + 1500 * static_cast<useconds_t>(round % 7));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    uint32_t writing = header_->writing;
    ASSERT_LE(writing, shard_.capacity());
    if (writing != 0) ++marked;
    std::set<uint64_t> seen;
    uint64_t count = 0;
    for (uint64_t i = 0; i < shard_.capacity(); ++i) {
      if (writing != 0 && i == writing - 1) continue;
      uint64_t a = shard_.slots()[i].address;
      if (a == 0) continue;
      ++count;
      EXPECT_TRUE(seen.insert(a).second) << "round " << round << ": duplicate in slot " << i;
    }
    EXPECT_LE(count, shard_.live_count() + 1) << "round " << round;
    EXPECT_GE(count + 1, shard_.live_count()) << "round " << round;
  }
  printf("[ figure   ] killed writers: %d with a marked slot, of 30\n", marked);
}

// The blocks a reader takes from the shard: every nonempty slot but the one `writing` names.
std::multiset<uint64_t> VisibleBlocks(const format::HashShardHeader& header,
                                      const HashSlot* slots) {
  std::multiset<uint64_t> seen;
  for (uint64_t i = 0; i < header.capacity; ++i) {
    if (header.writing != 0 && i == header.writing - 1) continue;
    if (slots[i].address != 0) seen.insert(slots[i].address);
  }
  return seen;
}

// Runs `op` in a child single-stepped under ptrace; after each of its instructions `check` reads
// the shared mapping. Returns the number of instructions stepped, or -1 where ptrace is refused.
template <typename Op, typename Check>
int SingleStep(Op op, Check check) {
  pid_t pid = fork();
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(2);
    raise(SIGSTOP);
    op();
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) return -1;
  int steps = 0;
  for (;;) {
    if (ptrace(PTRACE_SINGLESTEP, pid, nullptr, nullptr) != 0) {  // refused: no stopped child left
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return steps == 0 ? -1 : steps;
    }
    if (waitpid(pid, &status, 0) != pid || WIFEXITED(status) || WIFSIGNALED(status)) break;
    ++steps;
    check();
  }
  return steps;
}

// Ten blocks in slots 0..9, slot 4 then freed: an insert reuses it, the next one grows the extent.
class SlabShardStepTest : public SlabShardTest {
 protected:
  void SetUp() override {
    SlabShardTest::SetUp();
    for (uint64_t i = 0; i < 10; ++i) {
      ASSERT_EQ(i, shard_.Insert(ShardTestBlock(0x10000 + i * 64, 8)));
      before_.insert(0x10000 + i * 64);
    }
    ASSERT_TRUE(shard_.Remove(4, 0x10000 + 4 * 64, nullptr));
    before_.erase(0x10000 + 4 * 64);
  }

  // After every instruction of `op`: `writing` is 0 or names a slot below the extent; the other
  // slots hold distinct blocks, all of `before_` but `changed` and at most `changed` besides.
  void ExpectOneTornSlotAtMost(uint64_t changed, const std::function<void()>& op) {
    std::multiset<uint64_t> stable = before_;
    stable.erase(changed);
    int marked = 0;
    int steps = SingleStep(op, [&] {
      ASSERT_LE(header_->writing, shard_.capacity());
      if (header_->writing != 0) ++marked;
      std::multiset<uint64_t> rest = VisibleBlocks(*header_, shard_.slots());
      for (uint64_t a : stable) {
        auto it = rest.find(a);
        ASSERT_NE(rest.end(), it) << "block lost, writing " << header_->writing;
        rest.erase(it);
      }
      ASSERT_LE(rest.size(), 1u) << "writing " << header_->writing;
      if (!rest.empty()) {
        ASSERT_EQ(changed, *rest.begin());
      }
    });
    if (steps < 0) GTEST_SKIP() << "ptrace refused here";
    printf("[ figure   ] %d instructions stepped, %d with a slot marked\n", steps, marked);
    EXPECT_GT(marked, 3) << "the slot was written under the marker (" << steps << " steps)";
    EXPECT_EQ(0u, header_->writing);
  }

  std::multiset<uint64_t> before_;
};

TEST_F(SlabShardStepTest, EveryInstructionOfARemoveLeavesOneTornSlotAtMost) {
  const uint64_t gone = 0x10000 + 7 * 64;
  ASSERT_NO_FATAL_FAILURE(ExpectOneTornSlotAtMost(gone, [&] { shard_.Remove(7, gone, nullptr); }));
}

TEST_F(SlabShardStepTest, EveryInstructionOfAnInsertIntoAFreedSlotLeavesOneTornSlotAtMost) {
  ASSERT_NO_FATAL_FAILURE(
      ExpectOneTornSlotAtMost(0x90000, [&] { shard_.Insert(ShardTestBlock(0x90000, 8)); }));
}

TEST_F(SlabShardStepTest, EveryInstructionOfAnInsertPastTheExtentLeavesOneTornSlotAtMost) {
  ASSERT_EQ(4u, shard_.Insert(ShardTestBlock(0x80000, 8)));  // the freed slot is taken first
  before_.insert(0x80000);
  ASSERT_NO_FATAL_FAILURE(
      ExpectOneTornSlotAtMost(0x90000, [&] { shard_.Insert(ShardTestBlock(0x90000, 8)); }));
}

// A free beside the owner marks nothing (the marker is the owner's): at every instruction the
// other blocks stay, and the freed slot either still holds its block or has a zero address.
TEST_F(SlabShardStepTest, EveryInstructionOfAFreeBesideTheOwnerLeavesTheSlotWholeOrAddressless) {
  ASSERT_TRUE(shard_.Claim());
  const uint64_t gone = 0x10000 + 7 * 64;
  std::multiset<uint64_t> stable = before_;
  stable.erase(gone);
  int whole = 0, addressless = 0;
  int steps = SingleStep([&] { shard_.RemoveBesideOwner(7, gone, nullptr); },
                         [&] {
                           ASSERT_EQ(0u, header_->writing);
                           std::multiset<uint64_t> rest = VisibleBlocks(*header_, shard_.slots());
                           for (uint64_t a : stable) {
                             auto it = rest.find(a);
                             ASSERT_NE(rest.end(), it) << "block lost";
                             rest.erase(it);
                           }
                           const HashSlot& slot = shard_.slots()[7];
                           if (slot.address == gone) {
                             ++whole;
                             ASSERT_EQ(8u, slot.size());
                           } else {
                             ASSERT_EQ(0u, slot.address);
                             ++addressless;
                           }
                           ASSERT_LE(rest.size(), 1u);
                         });
  if (steps < 0) GTEST_SKIP() << "ptrace refused here";
  printf("[ figure   ] %d instructions stepped: %d whole, %d without the address\n", steps, whole,
         addressless);
  EXPECT_GT(whole, 0);
  EXPECT_GT(addressless, 0);
  EXPECT_EQ(HashSlot{}.address, shard_.slots()[7].address);
  EXPECT_EQ(0u, shard_.slots()[7].size_function) << "the rest is cleared too";
  EXPECT_EQ(1u, header_->freed_elsewhere_count);
  EXPECT_EQ(8u, header_->freed_elsewhere_bytes);
}

// A shard with an owner: other threads neither insert into it nor freeze it to free a block; the
// slots they free go back to the owner (whole list, when its stack is empty) and, once the owner
// gives the shard up, to everyone.
TEST_F(SlabShardTest, OtherThreadsFreeBesideTheOwnerAndTheirSlotsComeBack) {
  ASSERT_TRUE(shard_.Claim());
  EXPECT_FALSE(shard_.Claim()) << "one owner at a time";
  EXPECT_EQ(SlabShard::kNoSlot, shard_.InsertBesideOwner(ShardTestBlock(0x1000, 8)));
  for (uint64_t i = 0; i < 4; ++i)
    ASSERT_EQ(i, shard_.InsertOwned(ShardTestBlock(0x2000 + i * 16, 8)));
  ASSERT_TRUE(shard_.RemoveBesideOwner(1, 0x2010, nullptr));
  ASSERT_TRUE(shard_.RemoveBesideOwner(2, 0x2020, nullptr));
  EXPECT_FALSE(shard_.RemoveBesideOwner(2, 0x2020, nullptr)) << "freed twice";
  EXPECT_EQ(2u, shard_.live_count());
  EXPECT_EQ(16u, shard_.live_bytes());
  EXPECT_EQ(4u, header_->live_count) << "the owner's counter";
  EXPECT_EQ(2u, header_->freed_elsewhere_count);
  EXPECT_EQ(2u, shard_.InsertOwned(ShardTestBlock(0x3000, 8))) << "the list, last freed first";
  EXPECT_EQ(1u, shard_.InsertOwned(ShardTestBlock(0x3010, 8)));
  EXPECT_EQ(4u, shard_.InsertOwned(ShardTestBlock(0x3020, 8))) << "then the extent";
  ASSERT_TRUE(shard_.RemoveOwned(0, 0x2000, nullptr));
  ASSERT_TRUE(shard_.RemoveBesideOwner(3, 0x2030, nullptr));
  shard_.Release();
  EXPECT_EQ(3u, shard_.InsertBesideOwner(ShardTestBlock(0x4000, 8))) << "handed over at Release";
  EXPECT_EQ(0u, shard_.InsertBesideOwner(ShardTestBlock(0x4010, 8)));
  EXPECT_EQ(5u, shard_.live_count());
}

// The owner inserts and frees on its thread while two other threads free blocks it hands them:
// at the end the shard holds exactly the blocks nobody freed, every free slot is zero, and the
// slots freed elsewhere were reused.
TEST_F(SlabShardTest, AnOwnerAndTwoRemoversOnRealThreadsLeaveExactlyTheKeptBlocks) {
  Attach(uint64_t{1} << 18);
  ASSERT_TRUE(shard_.Claim());
  std::mutex mutex;
  std::deque<std::pair<uint32_t, uint64_t>> handed;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> freed_elsewhere{0};
  auto remover = [&] {
    for (;;) {
      std::pair<uint32_t, uint64_t> block{0, 0};
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!handed.empty()) {
          block = handed.front();
          handed.pop_front();
        }
      }
      if (block.second == 0) {
        if (done.load()) return;
        std::this_thread::yield();
        continue;
      }
      ASSERT_TRUE(shard_.RemoveBesideOwner(block.first, block.second, nullptr));
      freed_elsewhere.fetch_add(1);
    }
  };
  std::map<uint64_t, std::pair<uint32_t, BlockRecord>> kept;
  constexpr int kOps = 100000;
  std::thread owner([&] {
    std::mt19937_64 rng(5);
    for (int i = 0; i < kOps; ++i) {
      const uint64_t address = 0x7000'0000'0000 + uint64_t(i) * 16;
      BlockRecord b = ShardTestBlock(address, rng() % 500 + 1, 9, i);
      const uint32_t index = shard_.InsertOwned(b);
      ASSERT_NE(SlabShard::kNoSlot, index);
      switch (rng() % 4) {
        case 0:
          ASSERT_TRUE(shard_.RemoveOwned(index, address, nullptr));
          break;
        case 1:
        case 2: {
          std::lock_guard<std::mutex> lock(mutex);
          handed.emplace_back(index, address);
          break;
        }
        default:
          kept.emplace(address, std::make_pair(index, b));
      }
    }
    done.store(true);
  });
  std::thread first(remover), second(remover);
  owner.join();
  first.join();
  second.join();
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(kept));
  EXPECT_EQ(freed_elsewhere.load(), header_->freed_elsewhere_count);
  // Without reuse the extent would hold every kept and every handed block (3/4 of them).
  EXPECT_LT(shard_.capacity(), uint64_t{kOps} * 3 / 4) << "slots freed elsewhere were reused";
}

// Lock() holders see the owner's shard still: each holds it, reads every slot, and finds exactly
// live_count() blocks and no marked slot, while the owner inserts and frees as fast as it can.
TEST_F(SlabShardTest, LockFreezesTheOwnerBetweenItsOperations) {
  ASSERT_TRUE(ProcessBarrier::Register()) << "membarrier(2) is refused here";
  ASSERT_TRUE(shard_.Claim());
  std::atomic<bool> done{false};
  std::atomic<uint64_t> operations{0};
  std::thread owner([&] {
    std::vector<std::pair<uint32_t, uint64_t>> live;
    std::mt19937_64 rng(3);
    for (uint64_t i = 0; !done.load(std::memory_order_relaxed); ++i) {
      if (live.size() < 1000 && (live.empty() || rng() % 2 == 0)) {
        const uint64_t address = 0x6000'0000'0000 + i * 16;
        live.emplace_back(shard_.InsertOwned(ShardTestBlock(address, 24)), address);
      } else {
        const size_t k = rng() % live.size();
        ASSERT_TRUE(shard_.RemoveOwned(live[k].first, live[k].second, nullptr));
        live[k] = live.back();
        live.pop_back();
      }
      operations.fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (int round = 0; round < 300; ++round) {
    const uint64_t before = operations.load();
    while (operations.load() < before + 50) std::this_thread::yield();
    shard_.Lock();
    const uint64_t frozen_at = operations.load();
    uint64_t visible = 0;
    for (uint64_t i = 0; i < shard_.capacity(); ++i) visible += shard_.slots()[i].address != 0;
    EXPECT_EQ(0u, header_->writing) << "round " << round;
    EXPECT_EQ(shard_.live_count(), visible) << "round " << round;
    // The owner may count the operation it had just finished, and no other.
    EXPECT_LE(operations.load(), frozen_at + 1) << "the owner moved while frozen";
    shard_.Unlock();
  }
  done.store(true);
  owner.join();
}

}  // namespace
}  // namespace heapgraph
