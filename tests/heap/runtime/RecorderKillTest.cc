// SIGKILL in the middle of a run (tests/programs/hg_churn.cc: 4 threads churning the heap and
// anonymous mappings): the recording left behind must open, hold at most one torn node per shard
// (the node a writer was changing), and every block's stack must resolve into loaded modules.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

constexpr int kRuns = 10;

void ExpectAtMostOneTornNodePerShard(const RecordingReader& reader) {
  std::map<std::pair<TreeKind, uint32_t>, int> per_shard;
  for (const TornNode& node : reader.torn()) {
    int n = ++per_shard[{node.tree, node.shard}];
    EXPECT_LE(n, 1) << "shard " << node.shard << " has more than one torn node";
    EXPECT_TRUE(node.marked) << "node " << node.index << " of shard " << node.shard
                             << " failed validation without being marked as being written";
  }
  EXPECT_LE(reader.torn().size(), reader.shards().size());
}

// Every frame of every block lies in a module of the recording.
void ExpectStacksResolve(const RecordingReader& reader) {
  size_t unresolved = 0, empty = 0;
  for (const LiveBlock& block : reader.blocks()) {
    std::vector<uint64_t> frames = reader.Frames(block.stack);
    if (frames.empty()) ++empty;
    for (uint64_t frame : frames) unresolved += reader.Locate(frame) ? 0 : 1;
  }
  EXPECT_EQ(empty, 0u) << "blocks without a stack";
  EXPECT_EQ(unresolved, 0u) << "frames outside every recorded module";
}

void CheckKilledRecording(const std::string& dir) {
  try {
    RecordingReader reader(dir);
    EXPECT_GT(reader.blocks().size(), 0u);
    ASSERT_TRUE(reader.session().has_value());
    EXPECT_EQ(reader.session()->state, format::kSessionRecording);
    ExpectAtMostOneTornNodePerShard(reader);
    ExpectStacksResolve(reader);
  } catch (const RecordingError& e) {
    ADD_FAILURE() << "RecordingError: " << e.what();
  }
}

TEST(RecorderKillTest, SigkillMidRunLeavesARecordingThatReads) {
  unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(50, 300);
  for (int run = 0; run < kRuns; ++run) {
    TempRoot root;
    ChildProcess child(ProgramPath("hg_churn"), {"4"}, RecordingEnv(root.path(), ""));
    ASSERT_TRUE(child.WaitReady()) << child.Describe();
    int delay = delay_ms(random);
    SCOPED_TRACE("run " + std::to_string(run) + ", killed after " + std::to_string(delay) + " ms");
    std::this_thread::sleep_for(milliseconds(delay));
    child.Kill(SIGKILL);
    std::optional<int> status = child.Wait();
    ASSERT_TRUE(status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << child.Describe();
    std::string dir = root.DirectoryOf(child.pid());
    ASSERT_FALSE(dir.empty());
    CheckKilledRecording(dir);
  }
}

}  // namespace
}  // namespace heapgraph::proctest
