// tools/: `heapgraph run [--json FILE] [--text FILE] [--exitcode N] [--objc-ivars FILE]
// [--start-only] [--preload PATH] [--dir ROOT] [--options STR] -- PROGRAM ARGS...`: the program
// under the recorder (ChildRun) with a leak check at exit, after static destructors. The check runs
// inside the program (libheapgraph_scan.so, loaded by libheapgraph.so), which exits with --exitcode
// when it finds leaks; otherwise the program's own status passes through (127 when it could not
// start). A temporary root (no --dir) is removed afterwards.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tools/ChildRun.h"
#include "tools/Subcommand.h"

namespace heapgraph::tools {

class RunCommand : public Subcommand {
 public:
  explicit RunCommand(CLI::App& app);
  int Run() override;

 private:
  // The leak check's HEAPGRAPH_OPTIONS, then --options.
  std::string CheckOptions() const;

  ChildRunFlags child_;
  std::string json_;
  std::string text_ = "-";
  int exitcode_ = 23;
  bool start_only_ = false;
  std::string objc_ivars_;  // HEAPGRAPH_OBJC_IVARS: ownership rules for Objective-C ivars
};

}  // namespace heapgraph::tools
