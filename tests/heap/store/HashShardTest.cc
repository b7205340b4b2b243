// tests/heap: HashShard on a real MappedFile: exact results against std::map and
// std::unordered_map under random operations (Robin Hood order checked throughout), growth and disk
// reservation, backward-shift deletion across the table's wraparound, refusal at the maximum
// capacity, and the `writing` marker left by a killed writer, at random points and at every
// instruction of a shift (single-stepped under ptrace).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "heap/store/HashShard.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using format::AllocFunction;
using format::HashSlot;

// One shard laid out like heap.tree: the HashShardHeader in page 0, the slot region from page 1.
class HashShardTest : public testing::Test {
 protected:
  static constexpr uint64_t kSlotsOffset = format::kPageSize;

  void Attach(uint64_t max_capacity) {
    file_.Unmap();
    std::string name = "shard" + std::to_string(files_++);
    ASSERT_TRUE(file_.Create(dir_.fd(), name.c_str(), kSlotsOffset + max_capacity * 24));
    ASSERT_TRUE(file_.Reserve(0, kSlotsOffset));
    header_ = reinterpret_cast<format::HashShardHeader*>(file_.data());
    scratch_.Unmap();
    ASSERT_TRUE(scratch_.Map(max_capacity));
    shard_.Attach(header_, reinterpret_cast<HashSlot*>(file_.data() + kSlotsOffset), max_capacity,
                  &file_, kSlotsOffset, &scratch_);
    shard_.Reset();
  }

  void SetUp() override { Attach(uint64_t{1} << 16); }
  void TearDown() override {
    file_.Unmap();
    scratch_.Unmap();
  }

  static BlockRecord Block(uint64_t address, uint64_t size, uint32_t stack = 7, uint32_t seq = 9,
                           AllocFunction function = AllocFunction::kMalloc) {
    BlockRecord b;
    b.address = address;
    b.size = size;
    b.stack = stack;
    b.seq = seq;
    b.function = function;
    return b;
  }

  // The shard's contents must equal `model` exactly, by ForEach and by Find.
  void ExpectMatches(const std::map<uint64_t, BlockRecord>& model) {
    std::map<uint64_t, BlockRecord> seen;
    shard_.ForEach([&](const BlockRecord& b) {
      EXPECT_TRUE(seen.emplace(b.address, b).second) << "visited twice: " << b.address;
    });
    ASSERT_EQ(model.size(), seen.size());
    uint64_t bytes = 0;
    for (const auto& [address, expected] : model) {
      BlockRecord found;
      ASSERT_TRUE(shard_.Find(address, &found)) << address;
      EXPECT_EQ(expected.size, found.size);
      EXPECT_EQ(expected.stack, found.stack);
      EXPECT_EQ(expected.seq, found.seq);
      EXPECT_EQ(expected.function, found.function);
      EXPECT_EQ(1u, seen.count(address));
      bytes += expected.size;
    }
    EXPECT_EQ(model.size(), shard_.live_count());
    EXPECT_EQ(bytes, shard_.live_bytes());
    EXPECT_EQ(0u, header_->writing);
    EXPECT_LE(shard_.live_count() * 8, shard_.capacity() * 7);
    ExpectRobinHoodOrder();
  }

  // Robin Hood order: no empty slot between a block and its home, and along a run a block's
  // distance from its home is at most one more than its predecessor's.
  void ExpectRobinHoodOrder() {
    const uint64_t capacity = shard_.capacity();
    const HashSlot* slots = shard_.slots();
    auto distance = [&](uint64_t i) {
      uint64_t home = HashShard::Home(slots[i].address, capacity);
      return (i + capacity - home) % capacity;
    };
    for (uint64_t i = 0; i < capacity; ++i) {
      if (slots[i].address == 0) continue;
      uint64_t previous = (i + capacity - 1) % capacity;
      uint64_t limit = slots[previous].address == 0 ? 0 : distance(previous) + 1;
      ASSERT_LE(distance(i), limit) << "slot " << i << " of " << capacity;
    }
  }

  // The first `count` 16-byte-aligned addresses at or above `from` whose home slot in a table of
  // `capacity` slots is `home`.
  static std::vector<uint64_t> AddressesWithHome(uint64_t home, uint64_t capacity, int count,
                                                 uint64_t from = 0x10000) {
    std::vector<uint64_t> out;
    for (uint64_t a = from; static_cast<int>(out.size()) < count; a += 16) {
      if (HashShard::Home(a, capacity) == home) out.push_back(a);
    }
    return out;
  }

  TempDir dir_;
  int files_ = 0;
  MappedFile file_;
  RehashScratch scratch_;
  format::HashShardHeader* header_ = nullptr;
  HashShard shard_;
};

TEST_F(HashShardTest, EmptyShardHasNoTable) {
  EXPECT_EQ(0u, shard_.capacity());
  EXPECT_EQ(0u, header_->backed_bytes);
  BlockRecord found;
  EXPECT_FALSE(shard_.Find(0x1000, &found));
  EXPECT_FALSE(shard_.Remove(0x1000, nullptr));
  int visits = 0;
  shard_.ForEach([&](const BlockRecord&) { ++visits; });
  EXPECT_EQ(0, visits);
  EXPECT_FALSE(shard_.Upsert(Block(0, 8))) << "address 0 marks an empty slot";
}

TEST_F(HashShardTest, RandomOperationsMatchAStdMap) {
  std::mt19937_64 rng(12345);
  std::map<uint64_t, BlockRecord> model;
  std::vector<uint64_t> live;
  for (int op = 0; op < 200000; ++op) {
    uint64_t r = rng();
    bool insert = live.empty() || (op < 100000 ? r % 3 != 0 : r % 2 == 0);
    if (insert) {
      // Clustered addresses (a malloc arena) plus reuse of live ones (overwrites).
      uint64_t address = r % 8 == 0 && !live.empty() ? live[(r >> 8) % live.size()]
                                                     : 0x5555'0000'0000 + ((r >> 4) % 400000) * 16;
      BlockRecord b = Block(address, (r >> 20) % 5000 + 1, static_cast<uint32_t>(r >> 40),
                            static_cast<uint32_t>(op), AllocFunction::kCalloc);
      ASSERT_TRUE(shard_.Upsert(b));
      if (model.emplace(address, b).second) {
        live.push_back(address);
      } else {
        model[address] = b;
      }
    } else {
      size_t k = (r >> 8) % live.size();
      uint64_t address = live[k];
      BlockRecord removed;
      ASSERT_TRUE(shard_.Remove(address, &removed));
      EXPECT_EQ(model[address].seq, removed.seq);
      model.erase(address);
      live[k] = live.back();
      live.pop_back();
      EXPECT_FALSE(shard_.Remove(address, nullptr));
    }
    if (op % 20000 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
  EXPECT_EQ(0u, header_->dropped);
}

// Differential: a mix weighted like the recorder's (new blocks, frees of live ones, frees and
// lookups of absent addresses, overwrites) against std::unordered_map, over the whole growth
// from empty and at a steady load, checking every answer and, now and then, the whole table.
TEST_F(HashShardTest, RandomOperationsMatchAnUnorderedMap) {
  std::mt19937_64 rng(777);
  std::unordered_map<uint64_t, BlockRecord> model;
  std::vector<uint64_t> live;
  auto random_address = [&] { return 0x7f12'3400'0000 + (rng() % 100000) * 16; };
  for (int op = 0; op < 300000; ++op) {
    const uint64_t r = rng() % 100;
    const bool filling = op < 60000;
    if (live.empty() || r < (filling ? 60u : 40u)) {
      BlockRecord b = Block(random_address(), rng() % 4096 + 1, static_cast<uint32_t>(op), 3);
      bool fresh = model.find(b.address) == model.end();
      ASSERT_TRUE(shard_.Upsert(b));
      if (fresh) live.push_back(b.address);
      model[b.address] = b;
    } else if (r < 85) {
      size_t k = rng() % live.size();
      BlockRecord removed;
      ASSERT_TRUE(shard_.Remove(live[k], &removed));
      EXPECT_EQ(model[live[k]].stack, removed.stack);
      model.erase(live[k]);
      live[k] = live.back();
      live.pop_back();
    } else {
      uint64_t address = random_address();
      BlockRecord found;
      bool present = model.count(address) != 0;
      ASSERT_EQ(present, shard_.Find(address, &found)) << op;
      if (present) {
        EXPECT_EQ(model[address].stack, found.stack);
      } else {
        ASSERT_FALSE(shard_.Remove(address, nullptr)) << op;
      }
    }
    if (op % 25000 == 0) {
      std::map<uint64_t, BlockRecord> ordered(model.begin(), model.end());
      ASSERT_NO_FATAL_FAILURE(ExpectMatches(ordered));
    }
  }
  std::map<uint64_t, BlockRecord> ordered(model.begin(), model.end());
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(ordered));
}

TEST_F(HashShardTest, GrowsByAFifteenthAndReservesWholePagesAhead) {
  std::vector<uint64_t> capacities;
  std::map<uint64_t, BlockRecord> model;
  for (uint64_t i = 0; i < 20000; ++i) {
    BlockRecord b = Block(0x7f00'0000'0000 + i * 48, i + 1);
    ASSERT_TRUE(shard_.Upsert(b));
    model[b.address] = b;
    if (capacities.empty() || capacities.back() != shard_.capacity()) {
      capacities.push_back(shard_.capacity());
    }
    uint64_t need = shard_.capacity() * sizeof(HashSlot);
    ASSERT_GE(header_->backed_bytes, need);
    ASSERT_LT(header_->backed_bytes, need + format::kPageSize);
    ASSERT_EQ(0u, header_->backed_bytes % format::kPageSize);
  }
  ASSERT_EQ(HashShard::kInitialCapacity, capacities[0]);
  for (size_t i = 1; i < capacities.size(); ++i) {
    EXPECT_EQ(capacities[i - 1] * HashShard::kGrowNum / HashShard::kGrowDen, capacities[i]);
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
}

// Three blocks whose home is the last slot and one whose home is slot 0 fill slots 63, 0, 1, 2.
// Removing the first must pull each of the others back across the wraparound.
TEST_F(HashShardTest, BackwardShiftDeletionAcrossTheWraparound) {
  const uint64_t cap = HashShard::kInitialCapacity;
  std::vector<uint64_t> last = AddressesWithHome(cap - 1, cap, 3);
  std::vector<uint64_t> first = AddressesWithHome(0, cap, 1);
  std::map<uint64_t, BlockRecord> model;
  for (uint64_t a : {last[0], last[1], last[2], first[0]}) {
    ASSERT_TRUE(shard_.Upsert(Block(a, 8)));
    model[a] = Block(a, 8);
  }
  ASSERT_EQ(cap, shard_.capacity());
  const HashSlot* slots = shard_.slots();
  EXPECT_EQ(last[0], slots[cap - 1].address);
  EXPECT_EQ(last[1], slots[0].address);
  EXPECT_EQ(last[2], slots[1].address);
  EXPECT_EQ(first[0], slots[2].address);

  ASSERT_TRUE(shard_.Remove(last[0], nullptr));
  model.erase(last[0]);
  EXPECT_EQ(last[1], slots[cap - 1].address);
  EXPECT_EQ(last[2], slots[0].address);
  EXPECT_EQ(first[0], slots[1].address);
  EXPECT_EQ(0u, slots[2].address);
  EXPECT_EQ(0u, slots[2].size_function);
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));

  // Again from slot 63: last[2] (home 63) moves back to 63, first[0] (home 0) to slot 0.
  ASSERT_TRUE(shard_.Remove(last[1], nullptr));
  model.erase(last[1]);
  EXPECT_EQ(last[2], slots[cap - 1].address);
  EXPECT_EQ(first[0], slots[0].address);
  EXPECT_EQ(0u, slots[1].address);
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
}

TEST_F(HashShardTest, ABlockAtItsHomeIsNotMoved) {
  const uint64_t cap = HashShard::kInitialCapacity;
  std::vector<uint64_t> at5 = AddressesWithHome(5, cap, 2);
  std::vector<uint64_t> at6 = AddressesWithHome(6, cap, 1);
  std::vector<uint64_t> at7 = AddressesWithHome(7, cap, 1);
  for (uint64_t a : {at5[0], at5[1], at6[0], at7[0]}) ASSERT_TRUE(shard_.Upsert(Block(a, 1)));
  // Slots: 5 = at5[0], 6 = at5[1], 7 = at6[0], 8 = at7[0].
  const HashSlot* slots = shard_.slots();
  ASSERT_EQ(at7[0], slots[8].address);
  ASSERT_TRUE(shard_.Remove(at5[0], nullptr));
  EXPECT_EQ(at5[1], slots[5].address);
  EXPECT_EQ(at6[0], slots[6].address);
  EXPECT_EQ(at7[0], slots[7].address);
  EXPECT_EQ(0u, slots[8].address);
  ASSERT_TRUE(shard_.Remove(at5[1], nullptr));
  EXPECT_EQ(0u, slots[5].address);
  EXPECT_EQ(at6[0], slots[6].address) << "home 6: must not move into slot 5";
  EXPECT_EQ(at7[0], slots[7].address);
}

TEST_F(HashShardTest, RefusesNewBlocksAtTheMaximumCapacity) {
  Attach(128);
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    if (shard_.Upsert(Block(0x1000 + i * 16, 4))) ++accepted;
  }
  EXPECT_EQ(128u, shard_.capacity());
  EXPECT_EQ(104u, accepted) << "13/16 of 128 slots";
  EXPECT_EQ(96u, header_->dropped);
  EXPECT_EQ(104u, shard_.live_count());
  EXPECT_LE(header_->backed_bytes, 128u * sizeof(HashSlot)) << "never past the region";
  EXPECT_TRUE(shard_.Upsert(Block(0x1000, 99))) << "overwriting needs no new slot";
  ASSERT_TRUE(shard_.Remove(0x1010, nullptr));
  EXPECT_TRUE(shard_.Upsert(Block(0x1000 + 500 * 16, 4)));
  EXPECT_EQ(104u, shard_.live_count());
  EXPECT_EQ(104u * 4 + 95, shard_.live_bytes());
}

TEST_F(HashShardTest, UpsertOverwritesInPlace) {
  ASSERT_TRUE(shard_.Upsert(Block(0x2000, 10, 1, 1, AllocFunction::kMalloc)));
  ASSERT_TRUE(shard_.Upsert(Block(0x2000, 30, 2, 2, AllocFunction::kRealloc)));
  std::map<uint64_t, BlockRecord> model{{0x2000, Block(0x2000, 30, 2, 2, AllocFunction::kRealloc)}};
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(model));
}

// A child churns the shard (inserts, removes, growth) until SIGKILL. Whatever instruction it died
// on, the file must satisfy the `writing` invariant: 0 or 1 + a slot index (every other nonempty
// slot is a distinct block), or kRehashing.
TEST_F(HashShardTest, AKilledWriterLeavesOnlyTheMarkedSlotTorn) {
  int rehashing = 0, marked = 0;
  for (int round = 0; round < 30; ++round) {
    Attach(uint64_t{1} << 18);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      uint64_t x = 88172645463325252ull + static_cast<uint64_t>(round);
      for (uint64_t i = 0;; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t address = 0x5555'0000'0000 + (x % 300000) * 16;
        if (i % 5 < 3) {
          shard_.Upsert(Block(address, i % 100 + 1));
        } else {
          shard_.Remove(address, nullptr);
        }
      }
    }
    usleep(2000 + 1500 * static_cast<useconds_t>(round % 7));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    uint32_t writing = header_->writing;
    if (writing == format::kRehashing) {
      ++rehashing;
      continue;
    }
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
  printf("[ figure   ] killed writers: %d mid-rehash, %d with a marked slot, of 30\n", rehashing,
         marked);
}

// The blocks a reader takes from the shard: every nonempty slot but the one `writing` names.
// Fails on a duplicate; nullopt-like empty set with *rehashing when the whole shard is marked.
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

// A run that wraps the table's end, its members displaced by up to five slots: homes 60, 60, 60,
// 61, 61, 63, 0, 0, 1 fill slots 60..63 and 0..4 (capacity 64).
class HashShardStepTest : public HashShardTest {
 protected:
  void SetUp() override {
    HashShardTest::SetUp();
    const uint64_t cap = HashShard::kInitialCapacity;
    for (auto [home, count] : {std::pair<uint64_t, int>{60, 3}, {61, 2}, {63, 1}, {0, 2}, {1, 1}}) {
      std::vector<uint64_t> a = AddressesWithHome(home, cap, count + 1, 0x10000 + home * 0x100000);
      for (int k = 0; k < count; ++k) {
        ASSERT_TRUE(shard_.Upsert(Block(a[k], 8)));
        before_.insert(a[k]);
      }
      spare_[home] = a[count];
    }
    ASSERT_EQ(cap, shard_.capacity());
    ASSERT_EQ(9u, shard_.live_count());
    ASSERT_EQ(0u, shard_.slots()[5].address);
    ASSERT_NO_FATAL_FAILURE(ExpectRobinHoodOrder());
  }

  // After every instruction of `op`: `writing` is 0 or names a slot; the other slots hold distinct
  // blocks, all of `before_` but `changed` and at most `changed` besides.
  void ExpectOneTornSlotAtMost(uint64_t changed, const std::function<void()>& op) {
    std::multiset<uint64_t> stable = before_;
    stable.erase(changed);
    int marked = 0;
    int steps = SingleStep(op, [&] {
      ASSERT_LE(header_->writing, shard_.capacity());
      if (header_->writing != 0) ++marked;
      std::multiset<uint64_t> seen = VisibleBlocks(*header_, shard_.slots());
      std::multiset<uint64_t> rest = seen;
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
    EXPECT_GT(marked, 5) << "the shift ran under the marker (" << steps << " steps)";
    EXPECT_EQ(0u, header_->writing);
  }

  std::multiset<uint64_t> before_;
  std::map<uint64_t, uint64_t> spare_;  // home -> an address not inserted
};

TEST_F(HashShardStepTest, EveryInstructionOfADeletionsShiftLeavesOneTornSlotAtMost) {
  const uint64_t first = shard_.slots()[60].address;
  ASSERT_NO_FATAL_FAILURE(ExpectOneTornSlotAtMost(first, [&] { shard_.Remove(first, nullptr); }));
  before_.erase(first);
  EXPECT_EQ(8u, shard_.live_count());
  EXPECT_EQ(before_, VisibleBlocks(*header_, shard_.slots()));
  ASSERT_NO_FATAL_FAILURE(ExpectRobinHoodOrder());
  EXPECT_EQ(0u, shard_.slots()[4].address) << "every member moved back one slot";
}

TEST_F(HashShardStepTest, EveryInstructionOfAnInsertionsShiftLeavesOneTornSlotAtMost) {
  const uint64_t added = spare_[60];
  ASSERT_NO_FATAL_FAILURE(ExpectOneTornSlotAtMost(added, [&] { shard_.Upsert(Block(added, 8)); }));
  before_.insert(added);
  EXPECT_EQ(10u, shard_.live_count());
  EXPECT_EQ(before_, VisibleBlocks(*header_, shard_.slots()));
  ASSERT_NO_FATAL_FAILURE(ExpectRobinHoodOrder());
  EXPECT_EQ(added, shard_.slots()[63].address) << "after the three blocks of home 60";
}

// __lsan_ignore_object's flag: set on one block by MarkIgnored or carried in by Upsert, kept
// through a rehash and a removal's backward shift, and leaving size and function intact.
TEST_F(HashShardTest, IgnoredFlagIsKeptThroughGrowthAndShifts) {
  BlockRecord flagged = Block(0x20000, 48);
  flagged.ignored = true;
  ASSERT_TRUE(shard_.Upsert(flagged));
  ASSERT_TRUE(shard_.Upsert(Block(0x20010, 32)));
  EXPECT_FALSE(shard_.MarkIgnored(0x20020));  // no block starts there
  EXPECT_FALSE(shard_.MarkIgnored(0x20011));  // inside a block, not its start
  ASSERT_TRUE(shard_.MarkIgnored(0x20010));
  for (uint64_t a = 0x30000; a < 0x30000 + 16 * 500; a += 16)
    ASSERT_TRUE(shard_.Upsert(Block(a, 8)));
  for (uint64_t a = 0x30000; a < 0x30000 + 16 * 500; a += 32)
    ASSERT_TRUE(shard_.Remove(a, nullptr));
  BlockRecord found;
  ASSERT_TRUE(shard_.Find(0x20000, &found));
  EXPECT_TRUE(found.ignored);
  EXPECT_EQ(found.size, 48u);
  EXPECT_EQ(found.function, AllocFunction::kMalloc);
  ASSERT_TRUE(shard_.Find(0x20010, &found));
  EXPECT_TRUE(found.ignored);
  EXPECT_EQ(found.size, 32u);
  ASSERT_TRUE(shard_.Find(0x30010, &found));
  EXPECT_FALSE(found.ignored);
  EXPECT_EQ(shard_.live_bytes(), 48u + 32u + 250u * 8u);
}

}  // namespace
}  // namespace heapgraph
