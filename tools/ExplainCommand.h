// tools/: `heapgraph explain REPORT.json [ADDRESS]`: prints, as text (report/ExplanationText),
// the explanations a saved check's JSON report holds (a check run with explain targets: `heapgraph
// run --explain`, leak_explain=, heapgraph_check_leaks_explain); with ADDRESS, only the explained
// blocks on whose chain a block contains it. Exit status 0; 1 when ADDRESS is on no chain; 2 with
// one line "heapgraph: <why>" when the file cannot be read, is no leak report, or has no
// explanations.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

class ExplainCommand : public Subcommand {
 public:
  explicit ExplainCommand(CLI::App& app);
  int Run() override;

 private:
  std::string report_;
  std::string address_;
};

}  // namespace heapgraph::tools
