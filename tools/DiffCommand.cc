#include "tools/DiffCommand.h"

#include <cstdio>

#include "report/LeakDiff.h"
#include "report/LeakDiffText.h"
#include "tools/LeakReportFile.h"

namespace heapgraph::tools {

DiffCommand::DiffCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "diff", "Compare two JSON leak reports by leak signature: new, gone and grown leaks")) {
  command_->add_option("OLD", old_, "JSON leak report of the baseline")->required();
  command_->add_option("NEW", new_, "JSON leak report to judge")->required();
  command_->add_option("--exitcode", exitcode_, "Exit status when NEW has a new leak signature")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
}

int DiffCommand::Run() {
  report::LeakSignatures before, after;
  before.Add(ReadLeakReportJson(old_), old_);
  after.Add(ReadLeakReportJson(new_), new_);
  report::LeakDiff diff = report::LeakDiff::Compare(before, after);
  std::fputs(report::FormatLeakDiff(diff).c_str(), stdout);
  return diff.added.empty() ? 0 : exitcode_;
}

}  // namespace heapgraph::tools
