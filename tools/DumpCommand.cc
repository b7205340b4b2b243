#include "tools/DumpCommand.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "reader/RecordingReader.h"
#include "report/DumpReport.h"
#include "report/DumpReportJson.h"
#include "report/DumpReportText.h"
#include "report/Symbolizer.h"
#include "tools/ExitStatus.h"

namespace heapgraph::tools {

void DumpFlags::AddTo(CLI::App* command) {
  command->add_option("--top", top, "Groups to print, largest first (0 = all)")
      ->capture_default_str();
  command->add_flag("--json", json, "Print a JSON document instead of text");
  command->add_flag("--no-symbols{false}", symbolize, "Do not look up functions and source lines");
}

int PrintDump(const std::string& dir, const DumpFlags& flags) {
  std::optional<report::DumpReport> report;
  try {
    RecordingReader reader(dir);
    for (const std::string& w : reader.warnings()) PrintError("warning: " + w);
    std::optional<report::Symbolizer> symbols;
    if (flags.symbolize) symbols.emplace();
    report = report::BuildDumpReport(reader, symbols ? &*symbols : nullptr, {.top = flags.top});
    if (symbols) {
      for (const std::string& r : symbols->refused()) PrintError("warning: " + r);
    }
  } catch (const RecordingError& e) {
    PrintError(e.what());
    return kExitError;
  }
  bool complete = report->unreadable_stack.empty();
  if (!flags.json) {
    fmt::print("{}", report::DumpReportToText(*report));
  } else if (complete) {
    fmt::print("{}\n", report::DumpReportJsonText(*report));
  }
  fflush(stdout);
  if (complete) return 0;
  PrintError(report->unreadable_stack);
  return kExitError;
}

DumpCommand::DumpCommand(CLI::App& app)
    : Subcommand(app.add_subcommand("dump", "Print the live blocks of a recording directory")) {
  command_->add_option("DIR", dir_, "Recording directory (<root>/<pid>-<start>)")->required();
  flags_.AddTo(command_);
}

int DumpCommand::Run() {
  return PrintDump(dir_, flags_);
}

}  // namespace heapgraph::tools
