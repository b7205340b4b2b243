#include "report/FoomReportText.h"

#include <fmt/format.h>
#include <string.h>

namespace heapgraph::report {
namespace {

std::string Bytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", v, kUnits[unit]);
}

std::string ExitLine(const ExitRecord& e) {
  std::string line = fmt::format("exit: {} - {}", e.kind, e.reason);
  if (e.signal != 0) {
    const char* abbrev = sigabbrev_np(static_cast<int>(e.signal));
    line += fmt::format(" (SIG{}, code {}, address {:#x})", abbrev != nullptr ? abbrev : "?",
                        e.signal_code, e.signal_address);
  }
  if (e.exit_status_known) line += fmt::format(" (status {})", e.exit_status);
  if (e.kind == "oom_kill") {
    line += fmt::format(" (oom_kill {} -> {})", e.oom_kills_before, e.oom_kills_now);
  }
  if (e.kind == "hang") line += fmt::format(" (no progress for {} ms)", e.stall_ms);
  return line + fmt::format(" [{}]", e.source);
}

void AppendStack(std::string& out, const FoomStack& s) {
  out += fmt::format("    stack {}: {} blocks, {}\n", s.stack_id, s.count, Bytes(s.bytes));
  for (size_t i = 0; i < s.frames.size(); ++i) {
    const ReportFrame& f = s.frames[i];
    out += fmt::format("      #{} {:#x} {}\n", i, f.address, FrameLabel(f));
  }
}

}  // namespace

std::string FoomReportToText(const FoomReport& r) {
  std::string out = fmt::format("FOOM report: {}\n", r.directory);
  if (r.session) {
    out += fmt::format("process: pid {}, {}\n", r.session->pid, r.session->executable);
  }
  out += ExitLine(r.exit) + "\n";
  out += fmt::format("live: {} blocks, {}, {} categories, {} dropped\n", r.live_blocks,
                     Bytes(r.live_bytes), r.categories.size(), r.dropped);
  if (!r.torn.empty()) {
    out += fmt::format(
        "torn: {} entries, up to {} records were being changed when the process died (not "
        "counted)\n",
        r.torn.size(), r.torn_records);
  }
  if (r.feature) {
    out += fmt::format("feature: caller1={} | caller2={} | category={} | reason={}\n",
                       r.feature->caller1.empty() ? "?" : r.feature->caller1,
                       r.feature->caller2.empty() ? "?" : r.feature->caller2, r.feature->category,
                       r.feature->reason);
  }
  out += "categories:\n";
  for (size_t i = 0; i < r.categories.size(); ++i) {
    const FoomCategory& c = r.categories[i];
    out += fmt::format("  #{} {}: {} blocks, {}, {} stacks{}\n", i + 1, c.name, c.count,
                       Bytes(c.bytes), c.stack_count, c.suspect_reasons.empty() ? "" : " SUSPECT");
    for (const std::string& reason : c.suspect_reasons) out += "    suspect: " + reason + "\n";
    for (const FoomStack& s : c.stacks) AppendStack(out, s);
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace heapgraph::report
