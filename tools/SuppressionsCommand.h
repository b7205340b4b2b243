// tools/: `heapgraph suppressions REPORT.json [-o FILE]`: LeakSanitizer's --gen-suppressions for a
// saved check (any JSON leak report: `heapgraph run --json`, leak_json=, heapgraph_check_leaks):
// one "leak:<function>" rule per leak record not suppressed yet, naming its first application
// frame (report/SuppressionGenerator.h), on stdout or into FILE. Exit status 0; 2 with one line
// "heapgraph: <why>" when the report cannot be read or FILE cannot be written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

class SuppressionsCommand : public Subcommand {
 public:
  explicit SuppressionsCommand(CLI::App& app);
  int Run() override;

 private:
  std::string report_;
  std::string output_;
};

}  // namespace heapgraph::tools
