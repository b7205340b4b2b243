#include "tools/FoomCommand.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "heap/session/DumpRetention.h"
#include "heap/session/ExitEvidenceProbe.h"
#include "reader/RecordingReader.h"
#include "report/ExitRecord.h"
#include "report/FoomReport.h"
#include "report/FoomReportHtml.h"
#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"
#include "report/Symbolizer.h"
#include "tools/ExitStatus.h"
#include "tools/ReportFiles.h"

namespace heapgraph::tools {
namespace {

// The most recently started run in `root` whose process is no longer running (else the most
// recent run at all).
std::string LatestRun(const std::string& root) {
  std::string best, best_any;
  uint64_t best_time = 0, best_any_time = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    // A hidden directory is a run that a start is removing (DumpRetention::kRemovingPrefix).
    if (!entry.is_directory() || entry.path().filename().string().starts_with('.')) continue;
    auto session = std::make_unique<format::SessionHeader>();
    bool has_record = false;
    if (!DumpRetention::ReadSessionIn(entry.path().c_str(), session.get(), &has_record)) continue;
    bool alive = ExitEvidenceProbe::Gather(*session, has_record).alive;
    if (best_any.empty() || session->start_time_ns > best_any_time) {
      best_any = entry.path().string();
      best_any_time = session->start_time_ns;
    }
    if (!alive && (best.empty() || session->start_time_ns > best_time)) {
      best = entry.path().string();
      best_time = session->start_time_ns;
    }
  }
  if (error) throw std::runtime_error(fmt::format("{}: {}", root, error.message()));
  if (best.empty()) best = best_any;
  if (best.empty()) throw std::runtime_error(fmt::format("{}: no recording directories", root));
  return best;
}

}  // namespace

FoomCommand::FoomCommand(CLI::App& app)
    : Subcommand(app.add_subcommand(
          "foom", "Classify how a recorded run ended and report its live heap (FOOM report)")) {
  command_->add_option("DIR", dir_, "Recording directory (<root>/<pid>-<start>)");
  command_->add_option("--root", root_, "Report the latest finished run in ROOT");
  command_->add_flag("--json", json_, "Print the JSON document");
  command_->add_flag("--record", record_, "Print the one-line JSON record (for SQL)");
  command_
      ->add_option("--top-categories", top_categories_,
                   "Categories whose top stacks are reported (N)")
      ->capture_default_str();
  command_->add_option("--top-stacks", top_stacks_, "Stacks per such category (M)")
      ->capture_default_str();
  command_->add_option("--rules", rules_, "Suspect-category rules file");
  command_->add_option("--html", html_, "Also write the report as a self-contained HTML page");
  command_->add_flag("--no-symbols{false}", symbolize_,
                     "Do not look up functions and source lines");
  command_->callback([this] {
    if (dir_.empty() == root_.empty()) {
      throw CLI::ValidationError("foom", "give exactly one of DIR and --root");
    }
  });
}

int FoomCommand::Run() {
  report::FoomReportOptions options;
  options.top_categories = top_categories_;
  options.top_stacks = top_stacks_;
  if (!rules_.empty()) options.rules = report::SuspectRules::Load(rules_);
  std::string dir = dir_.empty() ? LatestRun(root_) : dir_;
  return PrintReport([&] {
    RecordingReader reader(dir);
    report::ExitRecord exit = report::ExitRecord::For(reader);
    std::optional<report::Symbolizer> symbols;
    if (symbolize_) symbols.emplace();
    report::FoomReport report =
        report::BuildFoomReport(reader, exit, symbols ? &*symbols : nullptr, options);
    if (!html_.empty()) WriteReportFile(html_, report::FoomReportHtml(report));
    if (record_) return report::FoomReportRecordLine(report) + "\n";
    if (json_) return report::FoomReportJsonText(report) + "\n";
    return report::FoomReportToText(report);
  });
}

}  // namespace heapgraph::tools
