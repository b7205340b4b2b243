// tests/check: frees the recorder applies in per-thread batches (option batch_frees,
// heap/runtime/DeferredFrees, scanner/QueuedFrees) on a real program, tests/programs/
// hg_batched_frees: a check while another thread holds freed blocks in its queue reports none of
// them; a thread's queue is applied when it exits; a forked child applies the queues of the
// threads it does not have; frees from a signal handler on a thread inside the recorder or
// between its steps leave nothing behind; large chunks are never held.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

class DeferredFreesCheckTest : public ::testing::Test {
 protected:
  // Runs hg_batched_frees `mode` linked (not preloaded) with `options`, until "ready".
  void Start(const std::string& mode, const std::string& options = "") {
    child_ = std::make_unique<ChildProcess>(ProgramPath("hg_batched_frees"),
                                            std::vector<std::string>{mode},
                                            RecordingEnv(root_.path(), options, false));
    ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
  }

  void TearDown() override {
    if (child_ != nullptr) {
      EXPECT_TRUE(child_->Finish()) << child_->Describe();
    }
  }

  std::unique_ptr<RecordingReader> Recording(pid_t pid) const {
    std::string dir = root_.DirectoryOf(pid);
    EXPECT_FALSE(dir.empty()) << "no recording directory for pid " << pid;
    return dir.empty() ? nullptr : std::make_unique<RecordingReader>(dir);
  }

  // The addresses the child printed as `key`.
  std::vector<uint64_t> Addresses(const std::string& key) const {
    std::vector<uint64_t> addresses;
    for (const auto& record : child_->Records(key)) addresses.push_back(ParseNumber(record.at(0)));
    return addresses;
  }

  size_t CountRecorded(const RecordingReader& reader, const std::vector<uint64_t>& addresses) {
    size_t n = 0;
    for (uint64_t address : addresses) n += FindBlock(reader, address) != nullptr ? 1 : 0;
    return n;
  }

  TempRoot root_;
  std::unique_ptr<ChildProcess> child_;
};

// The worker's 8 freed blocks wait in its queue (still in the recording), unreachable: the check
// must drop them, not report them.
TEST_F(DeferredFreesCheckTest, ACheckReportsNoBlockAnotherThreadFreedAndStillHolds) {
  Start("queued");
  std::vector<std::string> verdicts;
  for (const std::string& line : child_->lines()) {
    if (line.rfind("leaks=", 0) == 0) verdicts.push_back(line);
  }
  EXPECT_EQ(verdicts, std::vector<std::string>{"leaks=0"}) << child_->Describe();
  auto reader = Recording(child_->pid());
  ASSERT_NE(reader, nullptr);
  const std::vector<uint64_t> freed = Addresses("freed");
  ASSERT_EQ(freed.size(), 8u) << child_->Describe();
  // The scenario: the blocks are still queued (a recording read from outside shows them).
  EXPECT_EQ(CountRecorded(*reader, freed), freed.size());
}

// Chunks above 4 KiB (and mapped ones) are freed at once: a thread never holds large memory.
TEST_F(DeferredFreesCheckTest, LargeChunksAreFreedAtOnce) {
  Start("queued");
  auto reader = Recording(child_->pid());
  ASSERT_NE(reader, nullptr);
  const std::vector<uint64_t> big = Addresses("big");
  ASSERT_EQ(big.size(), 2u) << child_->Describe();
  EXPECT_EQ(CountRecorded(*reader, big), 0u);
}

TEST_F(DeferredFreesCheckTest, WithoutBatchesEveryFreeIsAppliedAtOnce) {
  Start("queued", "batch_frees=0");
  auto reader = Recording(child_->pid());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(CountRecorded(*reader, Addresses("freed")), 0u);
}

TEST_F(DeferredFreesCheckTest, AThreadAppliesItsQueueWhenItExits) {
  Start("exit");
  auto reader = Recording(child_->pid());
  ASSERT_NE(reader, nullptr);
  const std::vector<uint64_t> freed = Addresses("freed");
  ASSERT_EQ(freed.size(), 8u) << child_->Describe();
  EXPECT_EQ(CountRecorded(*reader, freed), 0u) << "the exited worker's frees were not applied";
}

// The parent's worker holds 8 freed blocks at the fork; in the child it does not exist, so the
// child applies its queue: its recording and its check show none of them.
TEST_F(DeferredFreesCheckTest, AForkedChildAppliesTheQueuesOfThreadsItDoesNotHave) {
  Start("fork");
  const auto children = child_->Records("child");
  ASSERT_EQ(children.size(), 1u) << child_->Describe();
  EXPECT_EQ(children[0].at(1), "leaks=0") << child_->Describe();
  auto reader = Recording(static_cast<pid_t>(ParseNumber(children[0].at(0))));
  ASSERT_NE(reader, nullptr);
  const std::vector<uint64_t> freed = Addresses("freed");
  ASSERT_EQ(freed.size(), 8u) << child_->Describe();
  EXPECT_EQ(CountRecorded(*reader, freed), 0u) << "the child kept the parent's queued frees";
  // The parent's worker still holds them.
  auto parent = Recording(child_->pid());
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(CountRecorded(*parent, freed), freed.size());
}

// A handler's malloc and free on a thread that is itself freeing (inside the recorder, or between
// a queue's steps): every handler block is gone once the thread's queue is applied.
TEST_F(DeferredFreesCheckTest, FreesFromSignalHandlersLeaveNoBlockBehind) {
  Start("signals");
  const auto handled = child_->Records("handled");
  ASSERT_EQ(handled.size(), 1u) << child_->Describe();
  EXPECT_GT(ParseNumber(handled[0].at(0)), 0u) << "no timer signal was handled";
  auto reader = Recording(child_->pid());
  ASSERT_NE(reader, nullptr);
  size_t handler_blocks = 0, churn_blocks = 0;
  for (const LiveBlock& block : reader->blocks()) {
    handler_blocks += block.size == 40 ? 1 : 0;
    churn_blocks += block.size == 48 ? 1 : 0;
  }
  EXPECT_EQ(handler_blocks, 0u);
  EXPECT_EQ(churn_blocks, 0u);
}

}  // namespace
}  // namespace heapgraph::proctest
