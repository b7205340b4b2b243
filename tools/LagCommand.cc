#include "tools/LagCommand.h"

#include <optional>

#include "report/LagReport.h"
#include "report/LagReportJson.h"
#include "report/LagReportText.h"
#include "report/Symbolizer.h"
#include "tools/ExitStatus.h"

namespace heapgraph::tools {

LagCommand::LagCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "lag", "Report the lags (hangs) the lag monitor recorded, with their stacks")) {
  command_->add_option("DIR", dir_, "Recording directory (<root>/<pid>-<start>)")->required();
  command_->add_flag("--json", json_, "Print the JSON document");
  command_->add_option("--frames", max_frames_, "Frames printed per stack (0: all)")
      ->capture_default_str();
  command_->add_flag("--no-symbols{false}", symbolize_,
                     "Do not look up functions and source lines");
}

int LagCommand::Run() {
  return PrintReport([this] {
    std::optional<report::Symbolizer> symbols;
    if (symbolize_) symbols.emplace();
    report::LagReport report = report::BuildLagReport(dir_, symbols ? &*symbols : nullptr);
    if (json_) return report::LagReportJsonText(report) + "\n";
    return report::LagReportToText(report, {.max_frames = max_frames_});
  });
}

}  // namespace heapgraph::tools
