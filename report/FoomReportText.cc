#include "report/FoomReportText.h"

#include <fmt/format.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "reader/ByteSize.h"
#include "report/StackLines.h"

namespace heapgraph::report {
namespace {

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

// "12 blocks, 1.00 KiB", or in a sampled recording "≈ 3012 ± 140 blocks, ≈ 2.94 MiB ± 0.14 MiB".
std::string Amount(const FoomTotals& t, bool sampled) {
  if (!sampled) return fmt::format("{} blocks, {}", t.count, ByteSize::Readable(t.bytes));
  return fmt::format("≈ {} ± {:.0f} blocks, ≈ {} ± {}", t.count, t.count_error,
                     ByteSize::Readable(t.bytes),
                     ByteSize::Readable(static_cast<uint64_t>(std::llround(t.bytes_error))));
}

std::string Seconds(uint64_t ns) {
  return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

std::string Sources(uint32_t sources) {
  std::string out;
  for (auto [bit, name] :
       {std::pair{format::kSourceRss, "RSS"}, std::pair{format::kSourceCgroup, "cgroup v2"},
        std::pair{format::kSourcePsi, "PSI"}}) {
    if ((sources & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "none" : out;
}

// The watcher's time line: one line per watermark crossed, in the order crossed.
void AppendPressure(std::string& out, const PressureTimeline& p, bool sampled) {
  const format::PressureHeader& h = p.header();
  out +=
      fmt::format("pressure: {} watermark entr{} (limit {}, sources: {})\n", p.entries().size(),
                  p.entries().size() == 1 ? "y" : "ies",
                  h.configured_limit != 0 ? ByteSize::Readable(h.configured_limit) : "memory.max",
                  Sources(h.sources));
  for (const PressureEntry& e : p.entries()) {
    const format::PressureRecord& r = e.record;
    std::string cgroup =
        r.cgroup_max != 0 || r.cgroup_current != 0
            ? fmt::format(", cgroup {} of {}", ByteSize::Readable(r.cgroup_current),
                          r.cgroup_max != 0 ? ByteSize::Readable(r.cgroup_max) : "max")
            : "";
    out += fmt::format(
        "  {}% at +{}: {}% of {}, RSS {}{}, heap {} {}blocks {}, VM {} regions {}{}\n", r.watermark,
        Seconds(r.elapsed_ns), r.percent, ByteSize::Readable(r.limit), ByteSize::Readable(r.rss),
        cgroup, r.heap_blocks, sampled ? "sampled " : "", ByteSize::Readable(r.heap_bytes),
        r.vm_blocks, ByteSize::Readable(r.vm_bytes),
        r.types_written != 0 ? fmt::format(", types refreshed ({} ms)", r.refresh_ns / 1000000)
                             : "");
  }
}

void AppendStack(std::string& out, const FoomStack& s, bool sampled, size_t max_frames) {
  out += fmt::format("    stack {}: {}\n", s.stack_id, Amount(s, sampled));
  AppendStackLines(out, s.frames, max_frames);
}

}  // namespace

std::string FoomReportToText(const FoomReport& r, const FoomTextOptions& options) {
  std::string out = fmt::format("FOOM report: {}\n", r.directory);
  if (r.session) {
    out += fmt::format("process: pid {}, {}\n", r.session->pid, r.session->executable);
  }
  out += ExitLine(r.exit) + "\n";
  if (r.crash_lag) {
    out += fmt::format("crash-lag: thread {}, {} of {} samples in the most time-consuming stack\n",
                       r.crash_lag->tid, r.crash_lag->repeats, r.crash_lag->samples);
    AppendStackLines(out, r.crash_lag->stack.frames, options.max_frames);
  }
  bool sampled = r.sample_mean != 0;
  out += fmt::format("live: {}, {} categories, {} dropped\n", Amount(r.live, sampled),
                     r.categories.size(), r.dropped);
  if (sampled) {
    out += fmt::format(
        "sampled recording (sample={}): counts and bytes are estimated from {} sampled blocks, "
        "± one standard error\n",
        ByteSize::Readable(r.sample_mean), r.live.sampled);
  }
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
  if (r.pressure) AppendPressure(out, *r.pressure, sampled);
  out += "categories:\n";
  for (size_t i = 0; i < r.categories.size(); ++i) {
    const FoomCategory& c = r.categories[i];
    out += fmt::format("  #{} {}: {}, {} stacks{}{}\n", i + 1, c.name, Amount(c, sampled),
                       c.stack_count, sampled ? fmt::format(" ({} sampled blocks)", c.sampled) : "",
                       c.suspect_reasons.empty() ? "" : " SUSPECT");
    for (const std::string& reason : c.suspect_reasons) out += "    suspect: " + reason + "\n";
    size_t shown =
        options.max_stacks == 0 ? c.stacks.size() : std::min(options.max_stacks, c.stacks.size());
    for (size_t k = 0; k < shown; ++k) AppendStack(out, c.stacks[k], sampled, options.max_frames);
    if (shown < c.stacks.size()) {
      out += fmt::format("    ... {} more stacks; see JSON\n", c.stacks.size() - shown);
    }
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace heapgraph::report
