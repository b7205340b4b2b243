// tools/: `heapgraph diff OLD.json NEW.json [--exitcode N]`: two saved leak checks compared by leak
// signature (report/LeakDiff.h): what leaks are new, gone and grown, on stdout
// (report/LeakDiffText.h). Exit status: --exitcode (23) when NEW has a signature OLD does not, else
// 0; 2 with one line "heapgraph: <why>" when a report cannot be read.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

class DiffCommand : public Subcommand {
 public:
  explicit DiffCommand(CLI::App& app);
  int Run() override;

 private:
  std::string old_;
  std::string new_;
  int exitcode_ = 23;
};

}  // namespace heapgraph::tools
