// tools/: `heapgraph lag DIR [--json] [--frames N] [--no-symbols]`: every lag the lag monitor
// recorded in one recording directory (report/LagReport, docs/lag.md): its thread, start,
// duration, CPU share and most time-consuming stack symbolized, with how many samples held it;
// a torn last record is reported as such. Text, or the JSON document with --json (the
// conventions of `heapgraph foom`). Works while the recorded process still runs. Exit status 0
// (also when the directory has no lag file: the report says so), or 2 with one line
// "heapgraph: <why>" on stderr when the lag file cannot be read.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

class LagCommand : public Subcommand {
 public:
  explicit LagCommand(CLI::App& app);
  int Run() override;

 private:
  std::string dir_;
  bool json_ = false;
  bool symbolize_ = true;
  size_t max_frames_ = 12;
};

}  // namespace heapgraph::tools
