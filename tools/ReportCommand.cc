#include "tools/ReportCommand.h"

#include <fmt/format.h>

#include <cstdio>

#include "reader/RecordingError.h"
#include "report/FoomReportHtml.h"
#include "report/FoomReportText.h"
#include "report/LeakReportHtml.h"
#include "report/LeakReportSarif.h"
#include "report/LeakReportText.h"
#include "report/ReportDocument.h"
#include "report/ReportJsonFields.h"
#include "tools/ExitStatus.h"
#include "tools/ReportFiles.h"

namespace heapgraph::tools {

ReportCommand::ReportCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "report", "Render a saved JSON report (leak check or FOOM) as text, HTML or SARIF")) {
  command_->add_option("REPORT", input_, "The JSON report (heapgraph run --json, foom --json)")
      ->required();
  command_->add_flag("--text", text_, "Print the text report (the default without --html/--sarif)");
  command_->add_option("--html", html_, "Write a self-contained HTML page to FILE");
  command_->add_option("--sarif", sarif_, "Write a SARIF 2.1.0 log to FILE (leak reports)");
  command_->add_flag("--categories", categories_, "Text: print the categories table");
  command_->add_flag("--all-records", all_records_,
                     "Text: every record and stack (FOOM: every stack and frame)");
  command_->add_flag("--full-indirect-stacks", full_indirect_stacks_,
                     "Text: indirect records with their whole stack");
  command_->add_option("--source-dir", source_dirs_,
                       "HTML: also look for source files under DIR (repeatable)");
}

int ReportCommand::Run() {
  try {
    report::ReportDocument document = report::ParseReportDocument(ReadReportFile(input_));
    if (!sarif_.empty() && !document.leak) {
      throw std::runtime_error("--sarif: only a leak report has SARIF results");
    }
    if (!html_.empty()) {
      report::HtmlOptions options;
      options.source_dirs = source_dirs_;
      options.json_report = input_;
      WriteReportFile(html_, document.leak ? report::LeakReportHtml(*document.leak, options)
                                           : report::FoomReportHtml(*document.foom, options));
    }
    if (!sarif_.empty()) WriteReportFile(sarif_, report::LeakReportSarifText(*document.leak));
    if (text_ || (html_.empty() && sarif_.empty())) {
      if (document.leak) {
        report::TextReportOptions options;
        options.categories = categories_;
        options.full_indirect_stacks = full_indirect_stacks_;
        if (!all_records_) options.max_records = 50;
        options.full_report = input_;
        fmt::print("{}", report::FormatLeakReportText(*document.leak, options));
      } else {
        report::FoomTextOptions options;
        if (all_records_) options = {.max_stacks = 0, .max_frames = 0};
        fmt::print("{}", report::FoomReportToText(*document.foom, options));
      }
      fflush(stdout);
    }
    return 0;
  } catch (const report::ReportJsonError& e) {
    PrintError(fmt::format("{}: {}", input_, e.what()));
  } catch (const RecordingError& e) {
    PrintError(e.what());
  }
  return kExitError;
}

}  // namespace heapgraph::tools
