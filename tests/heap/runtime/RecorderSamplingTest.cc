// Sampling mode on real children (tests/programs/hg_sampling.cc): a known mix of 64-byte and
// 1 MiB blocks is recorded as a Poisson-by-bytes sample, and `heapgraph dump --json` estimates
// the true totals within a few of its stated standard errors; frees of unsampled blocks leave
// nothing behind; a forked child keeps sampling into its own (version 3) recording.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

constexpr uint64_t kSmall = 1000000, kLarge = 1000;
// Deterministic: the sampler's streams come from this seed. The bounds below hold for any seed
// with probability > 0.9999 (4 standard errors).
constexpr const char* kSampling = "sample=1,sample_seed=20261121";

std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  return out;
}

nlohmann::json DumpJson(const std::string& dir) {
  return nlohmann::json::parse(
      Shell(std::string(HEAPGRAPH_CLI) + " dump --json --top 0 --no-symbols " + dir));
}

struct Totals {
  double count = 0, bytes = 0, count_variance = 0, bytes_variance = 0;
};

// The dump's estimates summed over the groups of `category` (independent groups: variances add).
Totals EstimateOf(const nlohmann::json& dump, const std::string& category) {
  Totals t;
  for (const auto& g : dump["groups"]) {
    if (g["category"] != category) continue;
    const auto& e = g["estimate"];
    t.count += e["count"].get<double>();
    t.bytes += e["bytes"].get<double>();
    t.count_variance += std::pow(e["count_error"].get<double>(), 2);
    t.bytes_variance += std::pow(e["bytes_error"].get<double>(), 2);
  }
  return t;
}

void ExpectMixEstimated(const std::string& dir) {
  nlohmann::json dump = DumpJson(dir);
  ASSERT_EQ(dump["summary"]["sample_mean"], 512 * 1024) << dump.dump().substr(0, 2000);
  Totals small = EstimateOf(dump, "Malloc 64 B");
  Totals large = EstimateOf(dump, "Malloc 1.00MiB");
  // ~1M x 64 B at mean 512 KiB: ~122 samples, relative error ~9 %.
  EXPECT_GT(std::sqrt(small.count_variance), 0.04 * kSmall);
  EXPECT_LT(std::sqrt(small.count_variance), 0.2 * kSmall);
  EXPECT_NEAR(small.count, kSmall, 4 * std::sqrt(small.count_variance));
  EXPECT_NEAR(small.bytes, 64.0 * kSmall, 4 * std::sqrt(small.bytes_variance));
  // 1 MiB blocks are sampled with probability 1 - e^-2: ~865 samples, error ~1.3 %.
  EXPECT_NEAR(large.count, kLarge, 4 * std::sqrt(large.count_variance));
  EXPECT_LT(std::sqrt(large.count_variance), 0.03 * kLarge);
  EXPECT_NEAR(large.bytes, 1048576.0 * kLarge, 4 * std::sqrt(large.bytes_variance));
  // The whole heap: the summary's estimate covers at least the mix.
  double total = dump["summary"]["estimate"]["bytes"].get<double>();
  double error = dump["summary"]["estimate"]["bytes_error"].get<double>();
  EXPECT_GT(total + 4 * error, 1048576.0 * kLarge + 64.0 * kSmall);
}

TEST(RecorderSamplingTest, DumpEstimatesAKnownMixWithinItsStatedError) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_sampling"),
                     {std::to_string(kSmall), std::to_string(kLarge), "1000000"},
                     RecordingEnv(root.path(), kSampling));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  ASSERT_TRUE(child.Finish()) << child.Describe();
  std::string dir = root.DirectoryOf(child.pid());
  RecordingReader reader(dir);
  EXPECT_EQ(reader.sample_mean(), 512u * 1024);
  // A sample: far fewer blocks than the program keeps.
  EXPECT_LT(reader.blocks().size(), 5000u);
  ExpectMixEstimated(dir);
  std::string text = Shell(std::string(HEAPGRAPH_CLI) + " dump --no-symbols --top 3 " + dir);
  EXPECT_NE(text.find("sampled recording (sample=512.00 KiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("sampled blocks"), std::string::npos) << text;
  EXPECT_NE(text.find(" ± "), std::string::npos) << text;
}

TEST(RecorderSamplingTest, FreesOfUnsampledBlocksLeaveNothingBehind) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_sampling"), {"0", "0", "3000000"},
                     RecordingEnv(root.path(), kSampling));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  AddressRange churn = RangeOf(child, "Churn");
  ASSERT_NE(churn.begin, 0u);
  ASSERT_TRUE(child.Finish()) << child.Describe();
  RecordingReader reader(root.DirectoryOf(child.pid()));
  ASSERT_NE(reader.session(), std::nullopt);
  // 3M x 64 B = 183 MiB allocated: ~366 were sampled, and every one was freed again.
  EXPECT_GT(reader.session()->sequence, 0u);
  for (const LiveBlock& b : reader.blocks()) {
    EXPECT_FALSE(StackPassesThrough(reader, b, churn)) << "a freed block is still live";
  }
  EXPECT_TRUE(reader.torn().empty());
  EXPECT_EQ(reader.dropped(), 0u);
  uint64_t counted = 0;
  for (const ShardStats& s : reader.shards()) {
    if (s.tree == TreeKind::kHeap) counted += s.live_count;
  }
  uint64_t read = 0;
  for (const LiveBlock& b : reader.blocks()) read += b.tree == TreeKind::kHeap ? 1 : 0;
  EXPECT_EQ(counted, read) << "shard counters disagree with the slots";
}

TEST(RecorderSamplingTest, ForkedChildKeepsSamplingIntoItsOwnRecording) {
  TempRoot root;
  ChildProcess parent(ProgramPath("hg_sampling"),
                      {std::to_string(kSmall), std::to_string(kLarge), "100000", "fork"},
                      RecordingEnv(root.path(), kSampling));
  ASSERT_TRUE(parent.WaitReady()) << parent.Describe();
  ASSERT_TRUE(parent.Finish()) << parent.Describe();
  pid_t forked = static_cast<pid_t>(parent.Number("child"));
  std::string child_dir = root.DirectoryOf(forked);
  ASSERT_FALSE(child_dir.empty()) << "no recording of the forked child";
  ExpectMixEstimated(child_dir);
  // The parent allocated none of the mix.
  nlohmann::json parent_dump = DumpJson(root.DirectoryOf(parent.pid()));
  EXPECT_EQ(parent_dump["summary"]["sample_mean"], 512 * 1024);
  EXPECT_LT(EstimateOf(parent_dump, "Malloc 1.00MiB").count, 1.0);
}

TEST(RecorderSamplingTest, FullModeIsUnchanged) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_sampling"), {"1000", "3", "1000"},
                     RecordingEnv(root.path(), ""));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  ASSERT_TRUE(child.Finish()) << child.Describe();
  RecordingReader reader(root.DirectoryOf(child.pid()));
  EXPECT_EQ(reader.sample_mean(), 0u);
  uint64_t small = 0;
  for (const StackGroup& g : reader.GroupByStack()) {
    if (g.category == "Malloc 64 B") small += g.count;
    EXPECT_EQ(g.estimate.count(), static_cast<double>(g.count));
    EXPECT_EQ(g.estimate.bytes_error(), 0.0);
  }
  EXPECT_GE(small, 1000u);
  nlohmann::json dump = DumpJson(root.DirectoryOf(child.pid()));
  EXPECT_EQ(dump["summary"]["sample_mean"], 0);
  EXPECT_FALSE(dump["summary"].contains("estimate"));
}

}  // namespace
}  // namespace heapgraph::proctest
