#include "tools/ExplainCommand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "report/ExplanationJson.h"
#include "report/ExplanationText.h"
#include "report/LeakReportJson.h"
#include "tools/ExitStatus.h"
#include "tools/LeakReportFile.h"

namespace heapgraph::tools {
namespace {

constexpr int kExitNotFound = 1;

nlohmann::ordered_json ReadReport(const std::string& path) {
  nlohmann::ordered_json report = ReadLeakReportJson(path);
  if (!report.contains("explain")) {
    throw std::runtime_error(
        fmt::format("{}: no explanations (run the check with --explain or leak_explain=)", path));
  }
  return report;
}

bool OnChain(const report::ExplainedBlock& b, uint64_t address) {
  return std::any_of(b.chain.begin(), b.chain.end(), [&](const report::ExplainHop& h) {
    return address >= h.address && address < h.address + std::max<uint64_t>(h.size, 1);
  });
}

// Keeps the blocks on whose chain `address` lies, and the targets that keep one.
void Filter(std::vector<report::Explanation>& explanations, uint64_t address) {
  for (report::Explanation& e : explanations) {
    std::erase_if(e.blocks, [&](const report::ExplainedBlock& b) { return !OnChain(b, address); });
  }
  std::erase_if(explanations, [](const report::Explanation& e) { return e.blocks.empty(); });
}

}  // namespace

ExplainCommand::ExplainCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "explain", "Print why blocks are reachable, from a leak check's JSON report")) {
  command_->add_option("REPORT", report_, "JSON report of a check run with --explain")->required();
  command_->add_option("ADDRESS", address_, "Only the chains through the block containing it");
}

int ExplainCommand::Run() {
  std::vector<report::Explanation> explanations;
  try {
    explanations = report::ExplanationsFromJson(ReadReport(report_).at("explain"));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: bad explanations: {}", report_, e.what()));
  }
  if (!address_.empty()) {
    Filter(explanations, std::stoull(address_, nullptr, 0));
    if (explanations.empty()) {
      PrintError(fmt::format("{}: no explained chain holds {}", report_, address_));
      return kExitNotFound;
    }
  }
  std::fputs(report::FormatExplanations(explanations).c_str(), stdout);
  return 0;
}

}  // namespace heapgraph::tools
