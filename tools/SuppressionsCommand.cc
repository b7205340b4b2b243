#include "tools/SuppressionsCommand.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "report/SuppressionGenerator.h"
#include "tools/LeakReportFile.h"

namespace heapgraph::tools {

SuppressionsCommand::SuppressionsCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "suppressions",
          "Write LeakSanitizer suppressions (leak:<function>) for a JSON leak report's leaks")) {
  command_->add_option("REPORT", report_, "JSON leak report")->required();
  command_->add_option("-o,--output", output_, "Write the rules to FILE (default: stdout)");
}

int SuppressionsCommand::Run() {
  std::string text;
  try {
    text = report::GenerateSuppressions(ReadLeakReportJson(report_));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: bad leak report: {}", report_, e.what()));
  }
  if (output_.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(output_);
  if (!(out << text) || !out.flush()) {
    throw std::runtime_error(fmt::format("cannot write {}", output_));
  }
  return 0;
}

}  // namespace heapgraph::tools
