#include "tools/RunCommand.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>
#include <system_error>

#include "heap/config/Config.h"
#include "report/LeakDiffText.h"
#include "tools/LeakReportFile.h"
#include "tools/OptionValue.h"
#include "tools/ReportFiles.h"
#include "tools/RunRoot.h"
#include "tools/RunSummary.h"
#include "tools/RunSymbolCache.h"

namespace heapgraph::tools {
namespace {

// A report file for HEAPGRAPH_OPTIONS; empty (none) and "-" (stderr) stay as they are.
std::string ReportPath(const std::string& path, const char* flag) {
  if (path.empty() || path == "-") return path;
  return OptionsPath(path, flag);
}

// leak_explain's value: the targets joined with '/', quoted (QuoteOptionValue) when a C++ name
// holds ':' or ','.
std::string ExplainOption(const std::vector<std::string>& targets) {
  std::string list;
  for (const std::string& t : targets) {
    if (t.empty() || t.find_first_of("/\"") != std::string::npos) {
      throw std::runtime_error(fmt::format(
          "--explain {}: must be an address or a function name without '/' or '\"'", t));
    }
    list += (list.empty() ? "" : "/") + t;
  }
  return QuoteOptionValue(list, "--explain");
}

// suppressions' value: the files, absolute, joined with ';'.
std::string SuppressionsOption(const std::vector<std::string>& files) {
  std::string list;
  for (const std::string& f : files) {
    std::string path = OptionsPath(f, "--suppressions");
    if (path.find(';') != std::string::npos) {
      throw std::runtime_error(fmt::format("--suppressions {}: must not contain ';'", f));
    }
    list += (list.empty() ? "" : ";") + path;
  }
  return list;
}

// A tag for this run's processes (option run_tag; RunSummary counts the recordings carrying it):
// random, so that runs sharing a --dir, one after another or side by side, do not meet. Never 0
// (no run).
uint32_t NewRunTag() {
  std::random_device random;
  uint32_t tag = 0;
  while (tag == 0) tag = static_cast<uint32_t>(random());
  return tag;
}

}  // namespace

RunCommand::RunCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "run", "Run PROGRAM under the recorder and check it for leaks at exit")) {
  command_->add_option("--json", json_, "Write the JSON leak report to FILE");
  command_->add_option("--html", html_,
                       "Write the leak report as a self-contained HTML page to FILE");
  command_->add_option("--text", text_, "Write the text report to FILE ('-' = stderr)")
      ->capture_default_str();
  command_->add_option("--exitcode", exitcode_, "Exit status when leaks are found")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  command_
      ->add_option("--error-exitcode", error_exitcode_,
                   "Exit status when the leak check could not run (one line on stderr says why)")
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
  command_->add_option("--objc-ivars", objc_ivars_,
                       "Objective-C ivar ownership rules, lines `Class ivar strong|weak [label]`");
  command_->add_flag("--start-only", start_only_,
                     "Only pointers to a block's start keep it alive (default: interior pointers "
                     "too)");
  command_->add_option(
      "--explain", explain_,
      "Say why the block containing ADDRESS (0x...), or the blocks allocated under "
      "FUNCTION (at most 10), are reachable: one chain from a root (repeatable)");
  command_->add_option("--suppressions", suppressions_,
                       "LeakSanitizer suppressions file (leak:<pattern> lines; repeatable)");
  command_->add_option("--baseline", baseline_,
                       "A JSON leak report of an earlier run: only leak signatures it does not "
                       "have fail the run");
  command_->add_flag("--categories", categories_,
                     "End the text report with the categories table (live and leaked blocks by "
                     "type)");
  command_->add_flag("--top-only", top_only_,
                     "Check only PROGRAM itself, not the processes it starts");
  command_->add_option("--check-exe", check_exe_,
                       "Check only processes whose executable's file name matches GLOB");
  child_.AddTo(command_, "Root directory for recordings (kept)");
  command_->footer(kSignalCheckHelp);
}

std::string RunCommand::CheckOptions(const std::string& json_pattern,
                                     const std::string& symbol_cache, uint32_t run_tag) const {
  std::string text = ReportPath(text_, "--text");
  // exitcode=0: a process's leaks leave its own status; Run() turns a clean exit with leaks into
  // --exitcode from the reports.
  std::string options = fmt::format(
      "leak_check=1,leak_json={},leak_text={},exitcode=0,error_exitcode={},interior={}",
      json_pattern, text == "-" ? "stderr" : text, error_exitcode_, start_only_ ? 0 : 1);
  if (top_only_) options += fmt::format(",leak_check_parent={}", getpid());
  if (categories_) options += ",leak_categories=1";
  if (!check_exe_.empty()) {
    options += ",leak_check_exe=" + QuoteOptionValue(check_exe_, "--check-exe");
  }
  if (!explain_.empty()) options += ",leak_explain=" + ExplainOption(explain_);
  if (!suppressions_.empty()) options += ",suppressions=" + SuppressionsOption(suppressions_);
  if (!symbol_cache.empty()) options += ",symbol_cache=" + symbol_cache;
  options += fmt::format(",run_tag={}", run_tag);
  if (!child_.options.empty()) options += "," + child_.options;
  return options;
}

int RunCommand::CheckedStatus(const ChildRun& child, int code) const {
  // Not started (127, already said) or killed by a signal (128 + N): no check was expected.
  if (child.pid() < 0 || code > 128) return code;
  // The recorder makes the directory in its constructor, before main; the at-exit check runs in
  // it, so a program without one was never checked.
  if (child.Recording()) return code;
  PrintError(fmt::format(
      "no leak check ran: no recording directory for pid {} in {} (was the preload library "
      "loaded?)",
      child.pid(), child.root()));
  return error_exitcode_;
}

bool RunCommand::NewAgainstBaseline(const report::LeakSignatures& baseline,
                                    const RunSummary& summary) const {
  report::LeakSignatures now;
  std::set<std::string> read;  // one file several processes shared (no %p) counts once
  bool unreadable = false;
  for (const CheckedProcess& p : summary.processes()) {
    if (p.blocks > 0 && p.report.empty()) {
      PrintError(
          fmt::format("pid {} leaked but wrote no JSON report: its leaks count as new", p.pid));
      unreadable = true;
    }
    if (!p.report.empty() && read.insert(p.report).second) {
      now.Add(ReadLeakReportJson(p.report), p.report);
    }
  }
  report::LeakDiff diff = report::LeakDiff::Compare(baseline, now);
  fmt::print(stderr, "heapgraph: against the baseline {}: {}", baseline_,
             report::FormatLeakDiff(diff));
  return unreadable || !diff.added.empty();
}

void RunCommand::WriteTopHtml(const RunSummary& summary, int top_pid) const {
  for (const CheckedProcess& p : summary.processes()) {
    if (p.pid != top_pid) continue;
    if (p.report.empty()) break;
    try {
      report::HtmlOptions html;
      html.json_report = json_;
      WriteHtmlReport(p.report, html_, html);
    } catch (const std::exception& e) {
      PrintError(fmt::format("--html: {}", e.what()));
    }
    return;
  }
  PrintError(fmt::format("--html: the program (pid {}) wrote no leak report; no page", top_pid));
}

int RunCommand::Run() {
  // A baseline that cannot be read stops the run before it starts (one line, status 2).
  report::LeakSignatures baseline;
  if (!baseline_.empty()) baseline.Add(ReadLeakReportJson(baseline_), baseline_);
  ChildRun child(child_);
  // Every checked process writes a JSON report (into the root unless --json says where), so that
  // the run summary and the exit status cover the whole process tree.
  std::string json_pattern =
      json_.empty() ? child.root() + "/leaks-%p.json" : ReportPath(json_, "--json");
  RunSymbolCache symbols(child.root());
  uint32_t run_tag = NewRunTag();
  std::string options = CheckOptions(json_pattern, symbols.option(), run_tag);
  if (!objc_ivars_.empty()) {
    std::string rules = std::filesystem::absolute(objc_ivars_).lexically_normal().string();
    setenv("HEAPGRAPH_OBJC_IVARS", rules.c_str(), 1);  // the program inherits it
  }
  RunRoot run_root(child.root(), run_tag);
  if (!child.temporary_root()) {
    Config config;  // the keep of --options (HEAPGRAPH_OPTIONS of its own are dropped: ChildRun)
    config.Parse(child_.options.c_str(), "--options");
    run_root.PruneEarlierRuns(config.keep);
  }
  // File times come from the kernel's coarse clock, a tick behind this one: a margin.
  auto started = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(2);
  int code = CheckedStatus(child, child.Run(options));
  RunSummary summary(child.root(), json_pattern, run_tag, started);
  if (!summary.processes().empty()) {
    fmt::print(stderr, "{}\n", summary.Line(/*show_paths=*/!json_.empty()));
  }
  // The program's own failure stands; leaks (new ones, with a baseline) fail a run that otherwise
  // succeeded.
  bool failing_leaks = summary.leaked_processes() > 0;
  if (!baseline_.empty() && failing_leaks) failing_leaks = NewAgainstBaseline(baseline, summary);
  if (code == 0 && failing_leaks) code = exitcode_;
  if (!html_.empty()) WriteTopHtml(summary, child.pid());
  if (child.temporary_root()) {
    std::error_code ignored;
    std::filesystem::remove_all(child.root(), ignored);
  }
  return code;
}

}  // namespace heapgraph::tools
