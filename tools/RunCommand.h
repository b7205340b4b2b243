// tools/: `heapgraph run [--json FILE] [--text FILE] [--html FILE] [--exitcode N]
// [--objc-ivars FILE] [--error-exitcode N] [--start-only] [--explain ADDRESS|FUNCTION]...
// [--suppressions FILE]...
// [--baseline OLD.json] [--top-only] [--check-exe GLOB] [--preload PATH] [--dir ROOT] [--options
// STR] -- PROGRAM ARGS...`: the program under the recorder (ChildRun) with a leak check at exit,
// after static destructors, in every process of the tree that records (--top-only: PROGRAM alone;
// --check-exe GLOB: the processes whose executable's file name matches). Each --explain is a block
// the check explains (option leak_explain, report/Explanation.h); a target holding ',', ':' or '/'
// (which HEAPGRAPH_OPTIONS cannot carry) is a usage error. The check runs inside each process
// (libheapgraph_scan.so, loaded by libheapgraph.so) and writes its JSON report (--json, where "%p"
// is the pid; by default leaks-%p.json in the root). Exit status: the program's own when it failed
// (127 when it could not start, 128 + N when signal N killed it); --exitcode (23) when it
// succeeded but a checked process leaked (with --baseline: a leak signature OLD.json does not
// have; the comparison is printed, report/LeakDiffText.h); --error-exitcode (24, never 0) after one
// line on stderr when a check could not run, or when the program exited without ever loading the
// recorder (no recording directory: a static or setuid binary, say). Then one line on stderr,
// "heapgraph: run summary: ...", names every recorded process and what its check found
// (tools/RunSummary). --html FILE renders the program's own report as a self-contained page
// (tools/ReportFiles); a program that wrote no report gets one line and no page, the status
// unchanged. A temporary root (no --dir) is removed afterwards.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "report/LeakDiff.h"
#include "tools/ChildRun.h"
#include "tools/ExitStatus.h"
#include "tools/RunSummary.h"
#include "tools/Subcommand.h"

namespace heapgraph::tools {

class RunCommand : public Subcommand {
 public:
  explicit RunCommand(CLI::App& app);
  int Run() override;

 private:
  // The leak check's HEAPGRAPH_OPTIONS, with `json_pattern` as the report path, then --options.
  std::string CheckOptions(const std::string& json_pattern, const std::string& symbol_cache,
                           uint32_t run_tag) const;
  // --html: the page of `top_pid`'s JSON report, or one line why there is none.
  void WriteTopHtml(const RunSummary& summary, int top_pid) const;
  // The status of `child`'s exit `code`: --error-exitcode, after one line, when the program ran
  // to its end without a recording directory (so without a check).
  int CheckedStatus(const ChildRun& child, int code) const;
  // Prints the run's reports against `baseline` on stderr; whether a leak signature is new.
  bool NewAgainstBaseline(const report::LeakSignatures& baseline, const RunSummary& summary) const;

  ChildRunFlags child_;
  std::string json_;
  std::string html_;
  std::string text_ = "-";
  int exitcode_ = 23;
  int error_exitcode_ = kExitCheckFailed;
  bool start_only_ = false;
  std::vector<std::string> explain_;       // leak_explain's targets
  std::vector<std::string> suppressions_;  // suppression files (the option joins them with ';')
  std::string objc_ivars_;   // HEAPGRAPH_OBJC_IVARS: ownership rules for Objective-C ivars
  std::string baseline_;     // --baseline: a JSON leak report
  bool categories_ = false;  // the text report ends with the categories table
  bool top_only_ = false;    // check PROGRAM only (leak_check_parent)
  std::string check_exe_;    // check only executables matching (leak_check_exe)
};

}  // namespace heapgraph::tools
