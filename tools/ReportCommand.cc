#include "tools/ReportCommand.h"

#include <fmt/format.h>

#include <cstdio>

#include "reader/RecordingError.h"
#include "report/DebugFileSearch.h"
#include "report/FoomReportHtml.h"
#include "report/FoomReportText.h"
#include "report/FrameResymbolizer.h"
#include "report/LeakReportHtml.h"
#include "report/LeakReportSarif.h"
#include "report/LeakReportText.h"
#include "report/ReportDocument.h"
#include "report/ReportJsonFields.h"
#include "report/Symbolizer.h"
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
  command_->add_option("--debug-dir", debug_dirs_,
                       "Symbols of unnamed frames: separate debug files under DIR, by build-id "
                       "(DIR/.build-id/xx/rest.debug) or name (DIR/NAME.debug, DIR/NAME); "
                       "repeatable. Also searched: /usr/lib/debug, the module file if it is still "
                       "the recorded build, debuginfod when DEBUGINFOD_URLS is set");
  command_->add_flag("--resymbolize", resymbolize_,
                     "Symbolize every frame again, not only the unnamed ones");
}

void ReportCommand::Symbolize(report::ReportDocument& document) const {
  report::DebugFileSearch search({.debug_dirs = debug_dirs_});
  report::Symbolizer symbolizer;
  report::FrameResymbolizer(search, symbolizer, resymbolize_).Resolve(document);
  for (const std::string& w : search.warnings()) PrintError("warning: " + w);
  for (const std::string& r : symbolizer.refused()) PrintError("warning: " + r);
}

int ReportCommand::Run() {
  try {
    report::ReportDocument document = report::ParseReportDocument(ReadReportFile(input_));
    Symbolize(document);
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
