#include "tools/RunCommand.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "tools/ReportFiles.h"

namespace heapgraph::tools {
namespace {

// A report file for HEAPGRAPH_OPTIONS; empty (none) and "-" (stderr) stay as they are.
std::string ReportPath(const std::string& path, const char* flag) {
  if (path.empty() || path == "-") return path;
  return OptionsPath(path, flag);
}

// leak_explain's value: the targets joined with '/', quoted (HEAPGRAPH_OPTIONS' "..." form) when a
// C++ name holds ':' or ','.
std::string ExplainOption(const std::vector<std::string>& targets) {
  std::string list;
  for (const std::string& t : targets) {
    if (t.empty() || t.find_first_of("/\"") != std::string::npos) {
      throw std::runtime_error(fmt::format(
          "--explain {}: must be an address or a function name without '/' or '\"'", t));
    }
    list += (list.empty() ? "" : "/") + t;
  }
  return list.find_first_of(",:") == std::string::npos ? list : "\"" + list + "\"";
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
  child_.AddTo(command_, "Root directory for recordings (kept)");
}

std::string RunCommand::CheckOptions(const std::string& json) const {
  std::string text = ReportPath(text_, "--text");
  std::string options = fmt::format(
      "leak_check=1,leak_json={},leak_text={},exitcode={},error_exitcode={},interior={}",
      ReportPath(json, "--json"), text == "-" ? "stderr" : text, exitcode_, error_exitcode_,
      start_only_ ? 0 : 1);
  if (!explain_.empty()) options += ",leak_explain=" + ExplainOption(explain_);
  if (!suppressions_.empty()) options += ",suppressions=" + SuppressionsOption(suppressions_);
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

int RunCommand::Run() {
  ChildRun child(child_);
  // --html without --json: the check's JSON goes into the recording root, the page is made from it.
  std::string json =
      json_.empty() && !html_.empty() ? child.root() + "/heapgraph-leaks.json" : json_;
  std::string options = CheckOptions(json);
  if (!objc_ivars_.empty()) {
    std::string rules = std::filesystem::absolute(objc_ivars_).lexically_normal().string();
    setenv("HEAPGRAPH_OBJC_IVARS", rules.c_str(), 1);  // the program inherits it
  }
  int code = CheckedStatus(child, child.Run(options));
  if (!html_.empty()) {
    try {
      report::HtmlOptions html;
      html.json_report = json_;
      WriteHtmlReport(json, html_, html);
    } catch (const std::exception& e) {
      PrintError(fmt::format("--html: {}", e.what()));
    }
  }
  if (child.temporary_root()) {
    std::error_code ignored;
    std::filesystem::remove_all(child.root(), ignored);
  }
  return code;
}

}  // namespace heapgraph::tools
