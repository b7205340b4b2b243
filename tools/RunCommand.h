// tools/: `heapgraph run [--json FILE] [--text FILE] [--html FILE] [--exitcode N] [--objc-ivars
// FILE]
// [--error-exitcode N] [--start-only] [--explain ADDRESS|FUNCTION]... [--preload PATH] [--dir ROOT]
// [--options STR] -- PROGRAM ARGS...`: the program under the recorder (ChildRun) with a leak check
// at exit, after static destructors. Each --explain is a block the check explains (option
// leak_explain, report/Explanation.h); a target holding ',', ':' or '/' (which HEAPGRAPH_OPTIONS
// cannot carry) is a usage error. The check runs inside the program (libheapgraph_scan.so, loaded
// by libheapgraph.so), which exits with --exitcode (23) when it finds leaks and with
// --error-exitcode (24, never 0) after one line on stderr when the check could not run; otherwise
// the program's own status passes through (127 when it could not start, 128 + N when signal N
// killed it). A program that exited without ever loading the recorder (no recording directory: a
// static or setuid binary, say) was not checked either: one line, and --error-exitcode. A temporary
// root (no --dir) is removed afterwards. --html FILE renders the check's JSON report (written to
// --json, else into the recording root) as a self-contained page (tools/ReportFiles); a check
// that wrote no report gets one line and no page, the status unchanged.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tools/ChildRun.h"
#include "tools/ExitStatus.h"
#include "tools/Subcommand.h"

namespace heapgraph::tools {

class RunCommand : public Subcommand {
 public:
  explicit RunCommand(CLI::App& app);
  int Run() override;

 private:
  // The leak check's HEAPGRAPH_OPTIONS, then --options.
  std::string CheckOptions(const std::string& json) const;
  // The status of `child`'s exit `code`: --error-exitcode, after one line, when the program ran
  // to its end without a recording directory (so without a check).
  int CheckedStatus(const ChildRun& child, int code) const;

  ChildRunFlags child_;
  std::string json_;
  std::string html_;
  std::string text_ = "-";
  int exitcode_ = 23;
  int error_exitcode_ = kExitCheckFailed;
  bool start_only_ = false;
  std::vector<std::string> explain_;       // leak_explain's targets
  std::vector<std::string> suppressions_;  // suppression files (the option joins them with ';')
  std::string objc_ivars_;  // HEAPGRAPH_OBJC_IVARS: ownership rules for Objective-C ivars
};

}  // namespace heapgraph::tools
