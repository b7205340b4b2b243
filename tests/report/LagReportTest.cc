// report/LagReport, LagReportText and LagReportJson on synthetic lag files (no stacks files: the
// frames stay empty, with a warning): a unit's records merged into one lag (the last stack, the
// end record's whole duration), CPU records one each, a lag without an end record open, a torn
// last record reported, a directory without a lag file, and the text and JSON forms.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "reader/RecordingError.h"
#include "report/LagReport.h"
#include "report/LagReportJson.h"
#include "report/LagReportText.h"
#include "tests/TempDir.h"
#include "tests/reader/SyntheticLagFile.h"

namespace heapgraph::report {
namespace {

using lagfile::LagHeaderBytes;
using lagfile::LagRecordBytes;

constexpr uint64_t kSecond = 1000000000;

format::LagRecord Long(int32_t tid, uint64_t unit, uint64_t at_s, uint64_t duration_s,
                       uint32_t stack) {
  format::LagRecord r = {};
  r.kind = format::kLagLong;
  r.tid = tid;
  r.unit = unit;
  r.realtime_ns = at_s * kSecond;
  r.duration_ns = duration_s * kSecond;
  r.stack = stack;
  r.stack_repeats = 3;
  r.sample_count = 4;
  for (uint32_t i = 0; i < 4; ++i) r.samples[i] = i < 3 ? stack : 99;
  r.cpu_permille = 15;
  return r;
}

format::LagRecord Ended(int32_t tid, uint64_t unit, uint64_t duration_s) {
  format::LagRecord r = {};
  r.kind = format::kLagEnded;
  r.tid = tid;
  r.unit = unit;
  r.duration_ns = duration_s * kSecond;
  return r;
}

format::LagRecord Cpu(int32_t tid, uint32_t permille) {
  format::LagRecord r = {};
  r.kind = format::kLagCpu;
  r.tid = tid;
  r.unit = 7;
  r.realtime_ns = 100 * kSecond;
  r.cpu_permille = permille;
  return r;
}

void WriteLagFile(const TempDir& dir, const std::string& bytes) {
  int fd = open(dir.Path("lag").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
}

std::string ThreeLags() {
  return LagHeaderBytes() + LagRecordBytes(Long(10, 2, 1000, 2, 5)) +
         LagRecordBytes(Long(10, 2, 1003, 5, 6)) + LagRecordBytes(Ended(10, 2, 9)) +
         LagRecordBytes(Cpu(11, 950)) + LagRecordBytes(Long(10, 4, 2000, 3, 8));
}

TEST(LagReportTest, UnitsMergedCpuRecordsKeptOpenLagMarked) {
  TempDir dir;
  WriteLagFile(dir, ThreeLags());
  LagReport r = BuildLagReport(dir.path(), nullptr);
  ASSERT_TRUE(r.present);
  EXPECT_FALSE(r.torn);
  EXPECT_EQ(r.header.threshold_ms, 2000u);
  ASSERT_EQ(r.lags.size(), 3u);
  const LagEntry& first = r.lags[0];
  EXPECT_EQ(first.kind, "long");
  EXPECT_EQ(first.tid, 10);
  EXPECT_EQ(first.unit, 2u);
  EXPECT_EQ(first.records, 2u);
  EXPECT_EQ(first.start_ns, 998 * kSecond);
  EXPECT_EQ(first.duration_ns, 9 * kSecond) << "the end record's whole run time";
  EXPECT_TRUE(first.ended);
  EXPECT_FALSE(first.open);
  EXPECT_EQ(first.stack_id, 6u) << "the last record's stack";
  EXPECT_EQ(first.repeats, 3u);
  EXPECT_EQ(first.samples, (std::vector<uint32_t>{6, 6, 6, 99}));
  EXPECT_EQ(r.lags[1].kind, "cpu");
  EXPECT_EQ(r.lags[1].cpu_permille, 950u);
  EXPECT_FALSE(r.lags[1].open);
  EXPECT_TRUE(r.lags[2].open);
  EXPECT_FALSE(r.lags[2].ended);
  EXPECT_FALSE(r.warnings.empty()) << "no stacks file: frames not resolved, said once";
}

TEST(LagReportTest, TornLastRecordIsReported) {
  TempDir dir;
  std::string last = LagRecordBytes(Long(10, 5, 3000, 4, 9));
  WriteLagFile(dir, ThreeLags() + last.substr(0, 200));
  LagReport r = BuildLagReport(dir.path(), nullptr);
  EXPECT_TRUE(r.torn);
  EXPECT_EQ(r.lags.size(), 3u);
  std::string text = LagReportToText(r);
  EXPECT_NE(text.find("torn: the last record was torn"), std::string::npos);
  EXPECT_NE(text.find("lag 2 (CPU share): thread 11, unit 7, at 1970-01-01 00:01:40.000 UTC, CPU "
                      "95.0% of a core over the check interval\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ran 9.00 s, ended"), std::string::npos) << text;
  EXPECT_NE(text.find("running at least 3.00 s, no end record (open)"), std::string::npos) << text;
  EXPECT_EQ(LagReportToJson(r)["torn"], true);
}

TEST(LagReportTest, NoLagFileSaysTheMonitorDidNotRun) {
  TempDir dir;
  LagReport r = BuildLagReport(dir.path(), nullptr);
  EXPECT_FALSE(r.present);
  EXPECT_NE(LagReportToText(r).find("no lag file"), std::string::npos);
  nlohmann::ordered_json j = LagReportToJson(r);
  EXPECT_EQ(j["present"], false);
  EXPECT_TRUE(j["options"].is_null());
}

TEST(LagReportTest, NotALagFileThrows) {
  TempDir dir;
  WriteLagFile(dir, "not a lag file, long enough to hold a header of the lag file format....");
  EXPECT_THROW(BuildLagReport(dir.path(), nullptr), RecordingError);
}

TEST(LagReportTest, TextNamesEveryLagAndItsStack) {
  LagReport r;
  r.directory = "/d";
  r.present = true;
  r.header.interval_ms = 1000;
  r.header.threshold_ms = 2000;
  r.header.sample_ms = 50;
  r.header.ring = 20;
  r.header.cpu_percent = 80;
  LagEntry lag;
  lag.kind = "long";
  lag.tid = 10;
  lag.unit = 2;
  lag.start_ns = 1764197956123000000ull;  // 2025-11-26 22:59:16.123 UTC
  lag.duration_ns = 3 * kSecond;
  lag.ended = true;
  lag.cpu_permille = 15;
  lag.records = 1;
  lag.stack_id = 6;
  lag.repeats = 3;
  lag.samples = {6, 6, 6, 99};
  ReportFrame f;
  f.address = 0x401136;
  f.function = "SleepingHandler";
  f.file = "/src/hg_lag.cc";
  f.line = 51;
  lag.frames = {f};
  r.lags.push_back(lag);
  EXPECT_EQ(LagReportToText(r),
            "Lag report: /d\n"
            "monitor: checks every 1000 ms, lag threshold 2000 ms, sampling every 50 ms into a "
            "ring of 20, CPU rule above 80%\n"
            "1 lag, 0 without an end record\n"
            "lag 1 (long unit): thread 10, unit 2, started 2025-11-26 22:59:16.123 UTC, ran "
            "3.00 s, ended, CPU 1.5%, 1 record\n"
            "  most time-consuming stack 6: 3 of 4 samples (0 missed)\n"
            "    #0 0x401136 SleepingHandler (hg_lag.cc:51)\n");
  nlohmann::ordered_json j = LagReportToJson(r);
  EXPECT_EQ(j["format"], "heapgraph-lag-report");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["options"]["sample_ms"], 50);
  const auto& l = j["lags"][0];
  EXPECT_EQ(l["kind"], "long");
  EXPECT_EQ(l["duration_ns"], 3 * kSecond);
  EXPECT_EQ(l["samples"], 4);
  EXPECT_EQ(l["repeats"], 3);
  EXPECT_EQ(l["sample_ids"], nlohmann::json::parse("[6,6,6,99]"));
  EXPECT_EQ(l["frames"][0]["function"], "SleepingHandler");
  EXPECT_EQ(l["frames"][0]["address"], "0x401136");
}

}  // namespace
}  // namespace heapgraph::report
