// BuildFoomReport and its text and JSON forms on synthetic recordings: categories with counts and
// bytes, identical stacks merged, top-N/top-M, suspects, the feature value, type categories from a
// `types` file, torn records, the one-line record, estimates with their errors in a sampled
// recording, and the `pressure` time line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "reader/SampleEstimate.h"
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
    if (!pressure_.empty()) files[format::kPressureFile] = pressure_;
    if (sample_mean_ != 0) {
      synthetic::Patch(files, format::kHeapTreeFile, offsetof(format::FileHeader, version),
                       format::kSampledTreeVersion);
      synthetic::Patch(files, format::kHeapTreeFile, offsetof(format::TreeHeader, sample_mean),
                       sample_mean_);
    }
    synthetic::WriteFiles(dir_, files);
    RecordingReader reader(dir_);
    ExitRecord exit;
    exit.kind = "likely_oom_kill";
    return BuildFoomReport(reader, exit, nullptr, options);
  }

  synthetic::SyntheticRecording rec_;
  std::string dir_;
  std::string types_;
  std::string pressure_;
  uint32_t sample_mean_ = 0;
  uint32_t stack_a_ = 0, stack_b_ = 0;
};

// A pressure file with one entry per watermark (50, 75, 90 % of 64 MiB).
std::string PressureFile(std::initializer_list<uint32_t> watermarks) {
  format::PressureHeader h = {};
  memcpy(h.file.magic, format::kPressureMagic, 8);
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::PressureRecord);
  h.category_size = sizeof(format::CategoryTotal);
  h.configured_limit = 64 << 20;
  h.sources = format::kSourceRss;
  h.watermark_count = 3;
  h.watermarks[0] = 50;
  h.watermarks[1] = 75;
  h.watermarks[2] = 90;
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof(h));
  for (uint32_t mark : watermarks) {
    format::PressureRecord r = {};
    r.tag = format::kPressureRecordTag;
    r.watermark = mark;
    r.percent = mark + 1;
    r.trigger = format::kTriggerPoll;
    r.elapsed_ns = mark * 10000000ull;
    r.limit = 64 << 20;
    r.rss = (64ull << 20) * (mark + 1) / 100;
    r.heap_blocks = mark * 100;
    r.heap_bytes = mark * 100000;
    r.types_written = 1;
    r.refresh_ns = 3000000;
    bytes.append(reinterpret_cast<const char*>(&r), sizeof(r));
  }
  return bytes;
}

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
  EXPECT_EQ(9u, r.live.count);
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

// The text cuts each category to its first stacks and each stack to its first frames, saying so;
// the JSON keeps them all.
TEST_F(FoomReportTest, TextCutsStacksAndFramesAndSaysSo) {
  for (uint64_t i = 0; i < 3; ++i) {
    rec_.AddBlock(TreeKind::kHeap, 0x100000 + i * 0x1000, 48, AllocFunction::kMalloc, stack_a_);
  }
  rec_.AddBlock(TreeKind::kHeap, 0x900000, 48, AllocFunction::kMalloc, stack_b_);
  FoomReport r = Build();
  ASSERT_EQ(2u, r.categories[0].stacks.size());
  std::string cut = FoomReportToText(r, {.max_stacks = 1, .max_frames = 1});
  EXPECT_NE(std::string::npos, cut.find("      ... 1 more frames; see JSON\n")) << cut;
  EXPECT_NE(std::string::npos, cut.find("    ... 1 more stacks; see JSON\n")) << cut;
  std::string whole = FoomReportToText(r, {.max_stacks = 0, .max_frames = 0});
  EXPECT_EQ(std::string::npos, whole.find("more frames")) << whole;
  EXPECT_EQ(std::string::npos, whole.find("more stacks")) << whole;
  EXPECT_EQ(2u, nlohmann::json::parse(FoomReportJsonText(r))["categories"][0]["stacks"].size());
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
  EXPECT_EQ(1u, r.live.count);
  EXPECT_EQ(1u, r.torn.size());
  EXPECT_EQ(1u, r.torn_records);
  EXPECT_NE(std::string::npos, FoomReportToText(r).find("torn: 1 entries, up to 1 records"));
}

TEST_F(FoomReportTest, SampledRecordingReportsEstimatesWithTheirErrors) {
  constexpr uint32_t kMean = 4096;
  for (uint64_t i = 0; i < 12; ++i) {
    rec_.AddBlock(TreeKind::kHeap, 0x100000 + i * 0x1000, 100, AllocFunction::kMalloc, stack_a_);
  }
  rec_.AddBlock(TreeKind::kHeap, 0x900000, 8 * kMean, AllocFunction::kMalloc, stack_b_);
  rec_.AddBlock(TreeKind::kVm, 0x7e0000000000, 4096, AllocFunction::kMmap, stack_a_);
  sample_mean_ = kMean;
  FoomReport r = Build();
  EXPECT_EQ(kMean, r.sample_mean);
  SampleEstimate small(kMean);
  for (int i = 0; i < 12; ++i) small.Add(100);
  ASSERT_EQ(3u, r.categories.size());
  // 12 sampled 100-byte blocks stand for ~500 blocks, more bytes than the one 32 KiB block.
  const FoomCategory& top = r.categories[0];
  EXPECT_EQ("Malloc 100 B", top.name);
  EXPECT_EQ(12u, top.sampled);
  EXPECT_EQ(static_cast<uint64_t>(std::llround(small.count())), top.count);
  EXPECT_EQ(static_cast<uint64_t>(std::llround(small.bytes())), top.bytes);
  EXPECT_DOUBLE_EQ(small.count_error(), top.count_error);
  EXPECT_GT(top.count_error, 0);
  EXPECT_EQ(top.count, top.stacks[0].count);
  EXPECT_DOUBLE_EQ(top.count_error, top.stacks[0].count_error);
  // A block far above the mean is almost surely sampled (p = 1 - e^-8): nearly exact; the VM
  // region is never sampled: exact.
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(1u, r.categories[i].count) << r.categories[i].name;
    EXPECT_LT(r.categories[i].count_error, 0.05) << r.categories[i].name;
  }
  EXPECT_EQ(14u, r.live.sampled);
  EXPECT_EQ(top.count + 2, r.live.count);
  EXPECT_NEAR(top.count_error, r.live.count_error, 0.01);  // the others add (almost) none
  std::string text = FoomReportToText(r);
  EXPECT_NE(std::string::npos, text.find("sampled recording (sample=4.00 KiB)")) << text;
  EXPECT_NE(std::string::npos, text.find(fmt::format("#1 Malloc 100 B: ≈ {} ± {:.0f} blocks",
                                                     top.count, top.count_error)))
      << text;
  nlohmann::json doc = nlohmann::json::parse(FoomReportJsonText(r));
  EXPECT_EQ(kMean, doc["summary"]["sample_mean"]);
  EXPECT_EQ(top.count, doc["summary"]["live_blocks"].get<uint64_t>() - 2);
  EXPECT_EQ(12, doc["categories"][0]["sampled_blocks"]);
  EXPECT_DOUBLE_EQ(top.bytes_error, doc["categories"][0]["bytes_error"].get<double>());
  nlohmann::json record = nlohmann::json::parse(FoomReportRecordLine(r));
  EXPECT_EQ(kMean, record["sample_mean"]);
  EXPECT_DOUBLE_EQ(top.count_error, record["top_category_count_error"].get<double>());
}

TEST_F(FoomReportTest, PressureTimeLineIsReportedAndACutEntryIsAWarning) {
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 64, AllocFunction::kMalloc, stack_a_);
  FoomReport none = Build();
  EXPECT_FALSE(none.pressure.has_value());
  EXPECT_TRUE(nlohmann::json::parse(FoomReportJsonText(none))["pressure"].is_null());
  pressure_ = PressureFile({50, 75, 90});
  FoomReport r = Build();
  ASSERT_TRUE(r.pressure.has_value());
  std::string text = FoomReportToText(r);
  EXPECT_NE(std::string::npos, text.find("pressure: 3 watermark entries (limit 64.00 MiB")) << text;
  // The verdict, then the time line, then the categories.
  EXPECT_LT(text.find("exit: "), text.find("pressure: ")) << text;
  EXPECT_LT(text.find("pressure: "), text.find("categories:")) << text;
  EXPECT_NE(std::string::npos, text.find("  75% at +0.75 s: 76% of 64.00 MiB, RSS 48.64 MiB"))
      << text;
  nlohmann::json doc = nlohmann::json::parse(FoomReportJsonText(r));
  const nlohmann::json& p = doc["pressure"];
  EXPECT_EQ(64 << 20, p["configured_limit"]);
  EXPECT_EQ(nlohmann::json::array({"rss"}), p["sources"]);
  ASSERT_EQ(3u, p["entries"].size());
  EXPECT_EQ(90, p["entries"][2]["watermark"]);
  EXPECT_EQ(9000, p["entries"][2]["heap_blocks"]);
  EXPECT_EQ(true, p["entries"][2]["types_written"]);
  nlohmann::json record = nlohmann::json::parse(FoomReportRecordLine(r));
  EXPECT_EQ(3, record["watermarks_reached"]);
  EXPECT_EQ(90, record["last_watermark"]);
  // Killed while appending the last entry: dropped, and said so.
  pressure_.resize(pressure_.size() - 10);
  FoomReport cut = Build();
  ASSERT_TRUE(cut.pressure.has_value());
  EXPECT_EQ(2u, cut.pressure->entries().size());
  ASSERT_FALSE(cut.warnings.empty());
  EXPECT_NE(std::string::npos, cut.warnings.back().find("cut short")) << cut.warnings.back();
  pressure_ = "HGPRESS1 garbage";
  FoomReport bad = Build();
  EXPECT_FALSE(bad.pressure.has_value());
  ASSERT_FALSE(bad.warnings.empty());
  EXPECT_NE(std::string::npos, bad.warnings.back().find("pressure: ")) << bad.warnings.back();
}

}  // namespace
}  // namespace heapgraph::report
