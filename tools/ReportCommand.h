// tools/: `heapgraph report REPORT.json [--text] [--html FILE] [--sarif FILE] [--categories]
// [--all-records] [--full-indirect-stacks] [--source-dir DIR]...`: renders any saved heapgraph JSON
// report (a leak check's or a FOOM report, recognized by report/ReportDocument) again, on any
// machine: the text report on stdout (the default when no file is asked for), a self-contained HTML
// page, a SARIF 2.1.0 log (leak reports only). Files are written 0600 and renamed into place
// (check/ReportFile). Exit status 0; 2 with one line "heapgraph: <why>" on stderr when the file
// cannot be read, is no heapgraph report or of an unknown version, or an output cannot be written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

class ReportCommand : public Subcommand {
 public:
  explicit ReportCommand(CLI::App& app);
  int Run() override;

 private:
  std::string input_;
  bool text_ = false;
  std::string html_;
  std::string sarif_;
  bool categories_ = false;
  bool all_records_ = false;
  bool full_indirect_stacks_ = false;
  std::vector<std::string> source_dirs_;
};

}  // namespace heapgraph::tools
