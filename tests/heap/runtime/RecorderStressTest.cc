// Many threads allocating at once, and threads exiting while others allocate: the recording must
// hold exactly the blocks the child program knows it left behind (tests/programs/hg_stress.cc,
// hg_thread_exit.cc). A block is attributed to a worker by a frame inside that worker's code,
// whose address range the child prints.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

constexpr milliseconds kStressTimeout{120000};

struct Totals {
  uint64_t count = 0;
  uint64_t bytes = 0;
};

// Live heap blocks with a frame in `range`.
Totals BlocksFrom(const RecordingReader& reader, const AddressRange& range) {
  Totals totals;
  for (const LiveBlock& block : reader.blocks()) {
    if (block.tree != TreeKind::kHeap || !StackPassesThrough(reader, block, range)) continue;
    ++totals.count;
    totals.bytes += block.size;
  }
  return totals;
}

class RecorderStressTest : public ::testing::Test {
 protected:
  // Runs `program` until it is ready and opens its recording.
  void Start(const std::string& program, const std::vector<std::string>& args) {
    child_ =
        std::make_unique<ChildProcess>(ProgramPath(program), args, RecordingEnv(root_.path(), ""));
    ASSERT_TRUE(child_->WaitReady(kStressTimeout)) << child_->Describe();
    std::string dir = root_.DirectoryOf(child_->pid());
    ASSERT_FALSE(dir.empty()) << "no recording directory for pid " << child_->pid();
    reader_ = std::make_unique<RecordingReader>(dir);
    EXPECT_TRUE(reader_->torn().empty()) << reader_->torn().size() << " torn nodes";
    EXPECT_EQ(reader_->dropped(), 0u);
    EXPECT_EQ(reader_->stack_stats().dropped, 0u);
  }

  // The child's "expected [name] <count> <bytes>" against the blocks from function `name`.
  void ExpectExact(const std::string& name, const std::vector<std::string>& expected) {
    ASSERT_GE(expected.size(), 2u) << child_->Describe();
    AddressRange range = RangeOf(*child_, name);
    ASSERT_LT(range.begin, range.end) << "no code range for " << name << "\n" << child_->Describe();
    Totals found = BlocksFrom(*reader_, range);
    EXPECT_EQ(found.count, ParseNumber(expected[expected.size() - 2])) << name;
    EXPECT_EQ(found.bytes, ParseNumber(expected.back())) << name;
  }

  void TearDown() override {
    if (child_ != nullptr) {
      EXPECT_TRUE(child_->Finish()) << child_->Describe();
    }
  }

  TempRoot root_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<RecordingReader> reader_;
};

// Each thread frees the blocks another thread allocated (in that thread's shard of the tree), all
// threads at once.
TEST_F(RecorderStressTest, BlocksFreedByOtherThreadsLeaveExactlyTheKeptBlocks) {
  Start("hg_stress", {"4", "200000", "cross"});
  ExpectExact("StressWorker", child_->Field("expected"));
  EXPECT_GT(child_->Number("expected"), 0u);
}

TEST_F(RecorderStressTest, EightThreadsOfMixedOperationsLeaveExactlyTheKeptBlocks) {
  auto start = std::chrono::steady_clock::now();
  Start("hg_stress", {"8", "1000000"});
  ExpectExact("StressWorker", child_->Field("expected"));
  EXPECT_GT(child_->Number("expected"), 0u);
  // Informational (a wall-clock limit would flake on a loaded machine): ~5 s on 2 idle cores.
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("seconds", std::to_string(seconds));
}

TEST_F(RecorderStressTest, ThreadsExitingWhileOthersAllocateLeaveExactCounts) {
  Start("hg_thread_exit", {"2000"});
  std::vector<std::string> short_lived = child_->Field("expected");
  ASSERT_FALSE(short_lived.empty());
  ASSERT_EQ(short_lived[0], "ShortLived");
  EXPECT_EQ(ParseNumber(short_lived[1]), 2000u);
  ExpectExact("ShortLived", short_lived);
  for (const std::vector<std::string>& record : child_->Records("expected")) {
    if (record.size() == 3 && record[0] == "Churn") ExpectExact("Churn", record);
  }
}

}  // namespace
}  // namespace heapgraph::proctest
