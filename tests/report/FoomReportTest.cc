// BuildFoomReport and its text and JSON forms on synthetic recordings: categories with counts and
// bytes, identical stacks merged, top-N/top-M, suspects, the feature value, type categories from a
// `types` file, torn records, and the one-line record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/FoomReport.h"
#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"
#include "tests/reader/SyntheticRecording.h"
#include "tests/reader/TypesFileBuilder.h"

namespace heapgraph::report {
namespace {

using format::AllocFunction;

class FoomReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path() / "foom-report-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(pattern.data()));
    dir_ = pattern;
    stack_a_ = rec_.AddStack({0x555500001000, 0x555500002000});
    stack_b_ = rec_.AddStack({0x555500003000, 0x555500002000});
    rec_.AddModule("/nonexistent/app", 0x555500000000, 0x555500000000, 0x555500010000, {});
    rec_.SetSession(77, "/nonexistent/app");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  FoomReport Build(FoomReportOptions options = {}) {
    synthetic::Files files = rec_.Build();
    if (!types_.empty()) files[format::kTypesFile] = types_;
    synthetic::WriteFiles(dir_, files);
    RecordingReader reader(dir_);
    ExitRecord exit;
    exit.kind = "likely_oom_kill";
    return BuildFoomReport(reader, exit, nullptr, options);
  }

  synthetic::SyntheticRecording rec_;
  std::string dir_;
  std::string types_;
  uint32_t stack_a_ = 0, stack_b_ = 0;
};

TEST_F(FoomReportTest, CategoriesMergeIdenticalStacksAndRankByBytes) {
  // Alternate shards (the synthetic tables are small).
  for (uint64_t i = 0; i < 5; ++i) {
    rec_.AddBlock(TreeKind::kHeap, 0x100000 + i * 0x1000, 48, AllocFunction::kMalloc, stack_a_);
  }
  for (uint64_t i = 0; i < 2; ++i) {
    rec_.AddBlock(TreeKind::kHeap, 0x900000 + i * 0x1000, 48, AllocFunction::kMalloc, stack_b_);
  }
  rec_.AddBlock(TreeKind::kHeap, 0x2001000, 49152, AllocFunction::kMalloc, stack_b_);
  rec_.AddBlock(TreeKind::kVm, 0x7e0000000000, 1 << 20, AllocFunction::kMmap, stack_a_);
  FoomReportOptions options;
  options.top_categories = 2;
  options.top_stacks = 1;
  options.rules = SuspectRules::Parse("count Malloc* 7\n");
  FoomReport r = Build(options);
  EXPECT_EQ(9u, r.live_blocks);
  ASSERT_EQ(3u, r.categories.size());
  EXPECT_EQ("VM: anonymous", r.categories[0].name);
  EXPECT_EQ("vm", r.categories[0].kind);
  EXPECT_EQ("Malloc 48.00KiB", r.categories[1].name);
  const FoomCategory& small = r.categories[2];
  EXPECT_EQ("Malloc 48 B", small.name);
  EXPECT_EQ(7u, small.count);
  EXPECT_EQ(7u * 48, small.bytes);
  EXPECT_EQ(2u, small.stack_count);
  // Not in the top 2, but suspect: its top stack (of M = 1) is reported.
  ASSERT_EQ(1u, small.suspect_reasons.size());
  ASSERT_EQ(1u, small.stacks.size());
  EXPECT_EQ(stack_a_, small.stacks[0].stack_id);
  EXPECT_EQ(5u, small.stacks[0].count);
  EXPECT_EQ(2u, small.stacks[0].frames.size());
  ASSERT_TRUE(r.feature.has_value());
  EXPECT_EQ("Malloc 48 B", r.feature->category);
  EXPECT_EQ("app+0x1000", r.feature->caller1);
  EXPECT_EQ("app+0x2000", r.feature->caller2);
  EXPECT_EQ(1u, r.categories[0].stacks.size());
  EXPECT_EQ(1u, r.categories[1].stacks.size());
}

TEST_F(FoomReportTest, TypesFileNamesMatchingBlocks) {
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 64, AllocFunction::kMalloc, stack_a_);
  rec_.AddBlock(TreeKind::kHeap, 0x2000, 64, AllocFunction::kMalloc, stack_a_);
  rec_.AddBlock(TreeKind::kHeap, 0x3000, 64, AllocFunction::kMalloc, stack_a_);
  FoomReport plain = Build();
  ASSERT_EQ(1u, plain.categories.size());
  RecordingReader reader(dir_);
  std::vector<format::TypeRecord> records;
  for (const LiveBlock& b : reader.blocks()) {
    if (b.address != 0x3000) records.push_back({b.address, b.seq, 0});
  }
  records.push_back({0x3000, 12345, 0});  // a stale record: another allocation at that address
  types_ = synthetic::BuildTypesFile({"Widget"}, records);
  FoomReport typed = Build();
  ASSERT_EQ(2u, typed.categories.size());
  EXPECT_EQ("Widget", typed.categories[0].name);
  EXPECT_EQ("type", typed.categories[0].kind);
  EXPECT_EQ(2u, typed.categories[0].count);
  EXPECT_EQ("Malloc 64 B", typed.categories[1].name);
  types_ = "garbage";
  FoomReport fallback = Build();
  EXPECT_EQ(1u, fallback.categories.size());
  ASSERT_FALSE(fallback.warnings.empty());
  EXPECT_NE(std::string::npos, fallback.warnings.back().find("types: "));
}

TEST_F(FoomReportTest, TextJsonAndRecordCarryTheSameFacts) {
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 2048, AllocFunction::kCalloc, stack_a_);
  FoomReport r = Build();
  std::string text = FoomReportToText(r);
  EXPECT_NE(std::string::npos, text.find("exit: likely_oom_kill")) << text;
  EXPECT_NE(std::string::npos, text.find("#1 Malloc 2.00KiB: 1 blocks, 2.00 KiB")) << text;
  nlohmann::json doc = nlohmann::json::parse(FoomReportJsonText(r));
  EXPECT_EQ("heapgraph-foom-report", doc["format"]);
  EXPECT_EQ(1, doc["summary"]["live_blocks"]);
  EXPECT_EQ("Malloc 2.00KiB", doc["categories"][0]["name"]);
  EXPECT_EQ(77, doc["session"]["pid"]);
  std::string line = FoomReportRecordLine(r);
  EXPECT_EQ(std::string::npos, line.find('\n'));
  nlohmann::json record = nlohmann::json::parse(line);
  EXPECT_EQ("likely_oom_kill", record["exit_kind"]);
  EXPECT_EQ("Malloc 2.00KiB", record["top_category"]);
  EXPECT_EQ(record["caller1"], doc["feature"]["caller1"]);
  for (const auto& [key, value] : record.items()) {
    EXPECT_TRUE(value.is_primitive()) << key << " is not a scalar (SQL column)";
  }
}

TEST_F(FoomReportTest, TornRecordsAreCountedNotMisread) {
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 64, AllocFunction::kMalloc, stack_a_);
  rec_.AddBlock(TreeKind::kHeap, 0x2000, 64, AllocFunction::kMalloc, stack_a_);
  synthetic::Files files = rec_.Build();
  synthetic::WriteFiles(dir_, files);
  RecordingReader before(dir_);
  ASSERT_EQ(2u, before.blocks().size());
  // Mark the first block's slot as being written when the process died.
  const LiveBlock& victim = before.blocks()[0];
  uint32_t writing = 0;
  {
    std::ifstream in(dir_ + "/" + format::kHeapTreeFile, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    for (uint32_t i = 0; i < 64 && writing == 0; ++i) {
      uint64_t address;
      memcpy(&address,
             bytes.data() + synthetic::SyntheticRecording::HashSlotOffset(victim.shard, i), 8);
      if (address == victim.address) writing = i + 1;
    }
  }
  ASSERT_NE(0u, writing);
  synthetic::Patch(files, format::kHeapTreeFile,
                   synthetic::SyntheticRecording::ShardHeaderOffset(victim.shard) + 4, writing);
  synthetic::WriteFiles(dir_, files);
  RecordingReader reader(dir_);
  ExitRecord exit;
  FoomReport r = BuildFoomReport(reader, exit, nullptr, {});
  EXPECT_EQ(1u, r.live_blocks);
  EXPECT_EQ(1u, r.torn.size());
  EXPECT_EQ(1u, r.torn_records);
  EXPECT_NE(std::string::npos, FoomReportToText(r).find("torn: 1 entries, up to 1 records"));
}

}  // namespace
}  // namespace heapgraph::report
