// tools/: `heapgraph report REPORT.json [--text] [--html FILE] [--sarif FILE] [--categories]
// [--all-records] [--full-indirect-stacks] [--source-dir DIR]... [--debug-dir DIR]...
// [--resymbolize]`: renders any saved heapgraph JSON report (a leak check's or a FOOM report,
// recognized by report/ReportDocument) again, on any machine: the text report on stdout (the
// default when no file is asked for), a self-contained HTML page, a SARIF 2.1.0 log (leak reports
// only). Frames the recording left unnamed (all with --resymbolize) are symbolized first from the
// files report/DebugFileSearch finds for their build-id (report/FrameResymbolizer); each search
// problem (a --debug-dir that is no directory, a file of another build) is one warning line on
// stderr and rendering goes on. Files are written 0600 and renamed into place
// (check/ReportFile). Exit status 0; 2 with one line "heapgraph: <why>" on stderr when the file
// cannot be read, is no heapgraph report or of an unknown version, or an output cannot be written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "report/ReportDocument.h"
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
  std::vector<std::string> debug_dirs_;
  bool resymbolize_ = false;

  // Fills in the document's unnamed frames (FrameResymbolizer) and prints the search's warnings.
  void Symbolize(report::ReportDocument& document) const;
};

}  // namespace heapgraph::tools
