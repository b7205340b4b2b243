// DumpReportToJson and DumpReportJsonText on hand-built reports: the document's keys, a frame per
// return address (module null outside every module, source only when symbolized), estimates only
// in a sampled recording, torn records, a missing session, and bytes that are not UTF-8.
#include <gtest/gtest.h>

#include <string>

#include "report/DumpReportJson.h"
#include "tests/report/DumpReportTestModel.h"

namespace heapgraph::report {
namespace {

using nlohmann::json;
using testing::SmallReport;

TEST(DumpReportJsonTest, DocumentSummaryAndSession) {
  json doc = DumpReportToJson(SmallReport());
  EXPECT_EQ(doc["directory"], "/rec/77-1");
  EXPECT_EQ(doc["summary"], json({{"live_blocks", 4},
                                  {"live_bytes", 244},
                                  {"unique_stacks", 2},
                                  {"torn", 0},
                                  {"dropped", 0},
                                  {"stacks_dropped", 0},
                                  {"modules", 2},
                                  {"sample_mean", 0}}));
  EXPECT_EQ(doc["session"], json({{"pid", 77},
                                  {"executable", "/bin/app"},
                                  {"start_time_ns", 5},
                                  {"state", "exited"},
                                  {"sequence", 9}}));
  EXPECT_EQ(doc["warnings"], json::array());
  EXPECT_EQ(doc["torn"], json::array());
  EXPECT_EQ(doc.size(), 6u);
}

TEST(DumpReportJsonTest, GroupsAndFramesPerReturnAddress) {
  json groups = DumpReportToJson(SmallReport())["groups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["rank"], 1);
  EXPECT_EQ(groups[0]["stack"], 3);
  EXPECT_EQ(groups[0]["count"], 3);
  EXPECT_EQ(groups[0]["bytes"], 144);
  EXPECT_EQ(groups[0]["category"], "Malloc 48 B");
  EXPECT_FALSE(groups[0].contains("estimate"));
  const json& frames = groups[0]["frames"];
  ASSERT_EQ(frames.size(), 3u);
  json inner = {{"function", "inner()"}, {"file", "/src/a.cc"}, {"line", 7}, {"inlined", true}};
  json outer = {{"function", "outer()"}, {"file", "/src/a.cc"}, {"line", 12}, {"inlined", false}};
  EXPECT_EQ(frames[0], json({{"address", 0x7f0000001234ull},
                             {"module", "/lib/libfoo.so"},
                             {"offset", 0x1234},
                             {"build_id", "abcd"},
                             {"source", {inner, outer}}}));
  EXPECT_EQ(frames[1], json({{"address", 0x555500001000ull},
                             {"module", "/bin/app"},
                             {"offset", 0x1000},
                             {"build_id", ""},
                             {"source", json::array()}}));
  EXPECT_EQ(frames[2],
            json({{"address", 0xdeadbeef0000ull}, {"module", nullptr}, {"source", json::array()}}));
  EXPECT_EQ(groups[1]["frames"], json::array());
}

TEST(DumpReportJsonTest, EstimatesOnlyWhenSampled) {
  DumpReport r = SmallReport();
  r.sample_mean = 1024;
  r.live = SampleEstimate(1024);
  r.live.Add(64);
  r.groups[0].group.estimate = r.live;
  json doc = DumpReportToJson(r);
  EXPECT_EQ(doc["summary"]["sample_mean"], 1024);
  EXPECT_DOUBLE_EQ(doc["summary"]["estimate"]["count"].get<double>(), r.live.count());
  EXPECT_DOUBLE_EQ(doc["summary"]["estimate"]["bytes_error"].get<double>(), r.live.bytes_error());
  EXPECT_DOUBLE_EQ(doc["groups"][0]["estimate"]["count_error"].get<double>(), r.live.count_error());
  EXPECT_FALSE(doc["groups"][1].contains("estimate"));  // a full recording's estimate (mean 0)
}

TEST(DumpReportJsonTest, TornWarningsAndNoSession) {
  DumpReport r = SmallReport();
  r.session.reset();
  r.warnings = {"session: missing"};
  r.torn.push_back({TreeKind::kVm, 1, 4, false, 1});
  json doc = DumpReportToJson(r);
  EXPECT_TRUE(doc["session"].is_null());
  EXPECT_EQ(doc["warnings"], json::array({"session: missing"}));
  EXPECT_EQ(
      doc["torn"],
      json::array(
          {{{"tree", "vm.tree"}, {"shard", 1}, {"index", 4}, {"marked", false}, {"records", 1}}}));
  EXPECT_EQ(doc["summary"]["torn"], 1);
}

TEST(DumpReportJsonTest, TextIsIndentedAndReplacesBytesThatAreNotUtf8) {
  DumpReport r = SmallReport();
  r.session->executable = "/bin/app\xc3";
  std::string text = DumpReportJsonText(r);
  EXPECT_EQ(text.rfind("{\n  \"directory\": \"/rec/77-1\",\n", 0), 0u) << text;
  EXPECT_EQ(json::parse(text)["session"]["executable"], "/bin/app\uFFFD");
}

}  // namespace
}  // namespace heapgraph::report
