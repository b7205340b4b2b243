// tests/check: "why is this block reachable?" (issue 11, item 2) on a real program
// (tests/programs/explain_roots): a block kept by a global, by a local of a named function on
// another thread, through a chain of two heap blocks from a global, by the main thread's TLS, and a
// leaked block. Through `heapgraph run --explain FUNCTION` (the at-exit check) and through
// heapgraph_check_leaks_explain with the blocks' addresses; each chain's root kind, thread, frame
// or symbol, its hops and the offset of each pointing word; the leaked block is "not reachable";
// `heapgraph explain REPORT.json [ADDRESS]` prints the saved chains.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/FileText.h"
#include "tests/ShellCommand.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using json = nlohmann::json;

const std::string kExplainProgram = std::string(HEAPGRAPH_PROGRAM_DIR) + "/explain_roots";

// "name value" lines of the program's stdout.
std::map<std::string, std::string> Values(const std::string& out) {
  std::map<std::string, std::string> values;
  std::istringstream lines(out);
  std::string name, value;
  while (lines >> name >> value) values[name] = value;
  return values;
}

struct Checked {
  int status = -1;
  std::map<std::string, std::string> values;
  json report;
  std::string diagnostics;
};

Checked RunChecked(const std::string& command, const std::string& json_path,
                   const std::string& dir) {
  Checked c;
  std::string out;
  std::string err = dir + "/stderr";
  c.status = shell::RunShellCommand(command + " 2>" + err, &out);
  c.values = Values(out);
  c.diagnostics =
      "status " + std::to_string(c.status) + "\nstdout:\n" + out + "stderr:\n" + ReadFile(err);
  std::string text = ReadFile(json_path);
  if (!text.empty()) c.report = json::parse(text, nullptr, false);
  return c;
}

// The explained block at `address` (as the program printed it), or null.
const json* Block(const json& report, const std::string& address) {
  for (const json& e : report["explain"]) {
    for (const json& b : e["blocks"]) {
      if (b["address"] == address) return &b;
    }
  }
  return nullptr;
}

// Each block's expected chain; `values` are the program's printed addresses and tids.
void ExpectChains(const json& report, const std::map<std::string, std::string>& v,
                  const std::string& diagnostics) {
  ASSERT_TRUE(report.contains("explain")) << diagnostics;

  const json* global = Block(report, v.at("global"));
  ASSERT_NE(global, nullptr) << report["explain"].dump(2);
  EXPECT_EQ((*global)["status"], "reachable");
  EXPECT_EQ((*global)["root"]["kind"], "global");
  EXPECT_NE((*global)["root"]["symbol"].get<std::string>().find("g_global"), std::string::npos);
  EXPECT_EQ((*global)["root"]["symbol_offset"], "0x0");
  EXPECT_NE((*global)["root"]["module"].get<std::string>().find("explain_roots"),
            std::string::npos);
  ASSERT_EQ((*global)["chain"].size(), 1u);
  EXPECT_EQ((*global)["chain"][0]["size"], 48);

  const json* stack = Block(report, v.at("stack"));
  ASSERT_NE(stack, nullptr) << report["explain"].dump(2);
  EXPECT_EQ((*stack)["status"], "reachable");
  EXPECT_EQ((*stack)["root"]["kind"], "stack") << (*stack).dump(2);
  EXPECT_EQ((*stack)["root"]["thread"].get<int>(), std::stoi(v.at("worker_tid")));
  EXPECT_EQ((*stack)["root"]["function"], "ExplainStackHolder") << (*stack).dump(2);
  ASSERT_EQ((*stack)["chain"].size(), 1u);
  EXPECT_EQ((*stack)["chain"][0]["size"], 64);
  EXPECT_NE((*stack)["chain"][0]["stack"][0].get<std::string>().find("ExplainStackSite"),
            std::string::npos);

  const json* tail = Block(report, v.at("chain_tail"));
  ASSERT_NE(tail, nullptr) << report["explain"].dump(2);
  EXPECT_EQ((*tail)["status"], "reachable");
  EXPECT_EQ((*tail)["root"]["kind"], "global");
  EXPECT_NE((*tail)["root"]["symbol"].get<std::string>().find("g_chain"), std::string::npos);
  ASSERT_EQ((*tail)["chain"].size(), 2u) << (*tail).dump(2);
  EXPECT_EQ((*tail)["chain"][0]["address"], v.at("chain_head"));
  EXPECT_EQ((*tail)["chain"][0]["size"], 96);
  EXPECT_EQ((*tail)["chain"][0]["next_offset"], "0x10");
  EXPECT_EQ((*tail)["chain"][1]["address"], v.at("chain_tail"));
  EXPECT_EQ((*tail)["chain"][1]["size"], 112);
  EXPECT_TRUE((*tail)["chain"][1]["next_offset"].is_null());

  const json* tls = Block(report, v.at("tls"));
  ASSERT_NE(tls, nullptr) << report["explain"].dump(2);
  EXPECT_EQ((*tls)["status"], "reachable");
  EXPECT_EQ((*tls)["root"]["kind"], "tls") << (*tls).dump(2);
  EXPECT_EQ((*tls)["root"]["thread"].get<int>(), std::stoi(v.at("main_tid")));

  const json* leak = Block(report, v.at("leak"));
  ASSERT_NE(leak, nullptr) << report["explain"].dump(2);
  EXPECT_EQ((*leak)["status"], "leaked");
  EXPECT_EQ((*leak)["leak_kind"], "direct");
  EXPECT_TRUE((*leak)["root"].is_null());
}

TEST(LeakCheckExplainTest, RunExplainsTheBlocksOfEachFunction) {
  TempDir dir;
  std::string json_path = dir.path() + "/report.json";
  std::string text_path = dir.path() + "/report.txt";
  std::string command = std::string(HEAPGRAPH_CLI) + " run --dir " + dir.path() + " --json " +
                        json_path + " --text " + text_path;
  for (const char* site : {"ExplainGlobalSite", "ExplainStackSite", "ExplainChainTailSite",
                           "ExplainTlsSite", "ExplainLeakSite"}) {
    command += std::string(" --explain ") + site;
  }
  Checked c = RunChecked(command + " -- " + kExplainProgram + " run", json_path, dir.path());
  ASSERT_EQ(c.status, 23) << c.diagnostics;  // the one leak
  ExpectChains(c.report, c.values, c.diagnostics);
  for (const json& e : c.report["explain"]) {
    EXPECT_EQ(e["kind"], "function");
    EXPECT_EQ(e["matched"], 1) << e.dump(2);
    EXPECT_EQ(e["blocks"].size(), 1u);
  }
  std::string text = ReadFile(text_path);
  EXPECT_NE(text.find("Why reachable: blocks allocated under ExplainLeakSite: 1 live\n  " +
                      c.values["leak"] + ": not reachable: reported as direct leak\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("in the frame of ExplainStackHolder at sp+"), std::string::npos) << text;
  EXPECT_NE(text.find("       at +0x10 points to\n"), std::string::npos) << text;

  // The saved check: every chain, or those through one block.
  std::string out;
  int status = shell::RunShellCommand(std::string(HEAPGRAPH_CLI) + " explain " + json_path, &out);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("not reachable: reported as direct leak"), std::string::npos) << out;
  out.clear();
  status = shell::RunShellCommand(
      std::string(HEAPGRAPH_CLI) + " explain " + json_path + " " + c.values["chain_head"], &out);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("Why reachable: blocks allocated under ExplainChainTailSite"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("ExplainGlobalSite"), std::string::npos) << out;
  out.clear();
  status = shell::RunShellCommand(
      std::string(HEAPGRAPH_CLI) + " explain " + json_path + " 0x10 2>/dev/null", &out);
  EXPECT_EQ(status, 1) << out;
}

TEST(LeakCheckExplainTest, TheApiExplainsAddresses) {
  TempDir dir;
  std::string json_path = dir.path() + "/report.json";
  Checked c = RunChecked(
      "HEAPGRAPH_OPTIONS=dir=" + dir.path() + " " + kExplainProgram + " api " + json_path,
      json_path, dir.path());
  ASSERT_EQ(c.status, 0) << c.diagnostics;
  EXPECT_EQ(c.values["result"], "1") << c.diagnostics;  // the one leak
  ExpectChains(c.report, c.values, c.diagnostics);
  for (const json& e : c.report["explain"]) {
    EXPECT_EQ(e["kind"], "address");
    EXPECT_EQ(e["matched"], 1) << e.dump(2);
  }
}

// A qualified name (',' and ':' separate HEAPGRAPH_OPTIONS' entries) reaches the check quoted;
// '/' (the targets' separator) is refused.
TEST(LeakCheckExplainTest, RunCarriesQualifiedNamesAndRefusesSlashes) {
  TempDir dir;
  std::string json_path = dir.path() + "/report.json";
  Checked c =
      RunChecked(std::string(HEAPGRAPH_CLI) + " run --dir " + dir.path() + " --json " + json_path +
                     " --explain 'app::Cache<int, long>::Make' --explain ExplainLeakSite -- " +
                     kExplainProgram + " run",
                 json_path, dir.path());
  ASSERT_EQ(c.status, 23) << c.diagnostics;
  ASSERT_EQ(c.report["explain"].size(), 2u) << c.diagnostics;
  EXPECT_EQ(c.report["explain"][0]["target"], "app::Cache<int, long>::Make");
  EXPECT_EQ(c.report["explain"][0]["matched"], 0);
  EXPECT_EQ(c.report["explain"][1]["matched"], 1);
  std::string out;
  int status =
      shell::RunShellCommand(std::string(HEAPGRAPH_CLI) + " run --dir " + dir.path() +
                                 " --explain a/b -- " + kExplainProgram + " run 2>/dev/null",
                             &out);
  EXPECT_EQ(status, 2) << out;
}

}  // namespace
}  // namespace heapgraph
