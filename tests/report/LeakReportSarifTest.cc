// LeakReportSarif: results per signature and rule, the primary location at the first application
// frame with a line, the stack as a code flow, fingerprints free of addresses; every log valid
// against the official SARIF 2.1.0 schema (tests/report/sarif, python3-jsonschema).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "report/LeakReportSarif.h"
#include "tests/ShellCommand.h"
#include "tests/TempDir.h"
#include "tests/report/ReportSamples.h"

namespace heapgraph::report {
namespace {

using Json = nlohmann::json;

TEST(LeakReportSarifTest, OneResultPerSignature) {
  Json log = Json::parse(LeakReportSarifText(samples::SampleLeakReport()));
  EXPECT_EQ(log["version"], "2.1.0");
  ASSERT_EQ(log["runs"].size(), 1u);
  const Json& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "heapgraph");
  // The direct record is the leaked cycle's representative: one result, the cycle's rule; the
  // indirect record is not reported again; the reachable cycle is a note.
  ASSERT_EQ(run["results"].size(), 2u);
  const Json& leak = run["results"][0];
  EXPECT_EQ(leak["ruleId"], "heapgraph/leaked-cycle/function-self");
  EXPECT_EQ(leak["level"], "warning");
  EXPECT_EQ(run["tool"]["driver"]["rules"][leak["ruleIndex"].get<size_t>()]["id"], leak["ruleId"]);
  const Json& primary = leak["locations"][0]["physicalLocation"];
  EXPECT_EQ(primary["artifactLocation"]["uri"], "chat.cc");  // not malloc, the first app frame
  EXPECT_EQ(primary["region"]["startLine"], 12);
  const Json& flow = leak["codeFlows"][0]["threadFlows"][0]["locations"];
  ASSERT_EQ(flow.size(), 3u);
  EXPECT_EQ(flow[0]["location"]["message"]["text"], "main (main.cc:5)");  // outermost first
  EXPECT_EQ(run["results"][1]["ruleId"], "heapgraph/reachable-cycle/shared_ptr");
  EXPECT_EQ(run["results"][1]["level"], "note");
  EXPECT_FALSE(run["results"][1].contains("locations"));
}

TEST(LeakReportSarifTest, FingerprintIgnoresAddressesAndLines) {
  LeakReport a = samples::SampleLeakReport();
  LeakReport b = samples::SampleLeakReport();
  std::vector<ReportFrame> frames = b.leaks[0].stack.ToVector();
  for (ReportFrame& f : frames) {
    f.address += 0x10000;  // another ASLR base
    if (f.line != 0) f.line += 3;
  }
  b.leaks[0].stack = {};
  for (ReportFrame& f : frames) b.leaks[0].stack.push_back(f);
  auto fingerprint = [](const LeakReport& r) {
    return Json::parse(LeakReportSarifText(r))["runs"][0]["results"][0]["partialFingerprints"];
  };
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  b.leaks[0].stack.replace(1, samples::Frame(0x555500001000, "Other::start()", "chat.cc", 12));
  EXPECT_NE(fingerprint(a), fingerprint(b));
}

TEST(LeakReportSarifTest, ValidAgainstTheSchema) {
  heapgraph::TempDir dir;
  std::string logs;
  for (bool hostile : {false, true}) {
    std::string path = dir.path() + (hostile ? "/hostile.sarif" : "/plain.sarif");
    std::ofstream(path) << LeakReportSarifText(samples::SampleLeakReport(hostile));
    logs += " " + path;
  }
  std::string path = dir.path() + "/empty.sarif";
  std::ofstream(path) << LeakReportSarifText(LeakReport{});
  logs += " " + path;
  std::string output;
  int status = shell::RunShellCommand(
      std::string("python3 ") + HEAPGRAPH_SARIF_VALIDATOR + logs + " 2>&1", &output);
  if (status == 77 || status == 127) GTEST_SKIP() << "no validator: " << output;
  EXPECT_EQ(status, 0) << output;
}

}  // namespace
}  // namespace heapgraph::report
