#include "report/LagReportText.h"

#include <fmt/format.h>
#include <time.h>

#include "report/StackLines.h"

namespace heapgraph::report {
namespace {

// "2026-11-26 22:59:16.123 UTC".
std::string Utc(uint64_t realtime_ns) {
  time_t seconds = static_cast<time_t>(realtime_ns / 1000000000);
  struct tm t = {};
  gmtime_r(&seconds, &t);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} UTC", t.tm_year + 1900,
                     t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                     realtime_ns / 1000000 % 1000);
}

std::string Percent(uint32_t permille) {
  return fmt::format("{}.{}%", permille / 10, permille % 10);
}

std::string Options(const format::LagHeader& h) {
  std::string sampling =
      h.sample_ms == 0 ? "no sampling"
                       : fmt::format("sampling every {} ms into a ring of {}", h.sample_ms, h.ring);
  std::string cpu =
      h.cpu_percent == 0 ? "CPU rule off" : fmt::format("CPU rule above {}%", h.cpu_percent);
  return fmt::format("monitor: checks every {} ms, lag threshold {} ms, {}, {}\n", h.interval_ms,
                     h.threshold_ms, sampling, cpu);
}

void AppendLag(std::string& out, size_t number, const LagEntry& lag, size_t max_frames) {
  if (lag.kind == "cpu") {
    out += fmt::format(
        "lag {} (CPU share): thread {}, unit {}, at {}, CPU {} of a core over the "
        "check interval\n",
        number, lag.tid, lag.unit, Utc(lag.last_ns), Percent(lag.cpu_permille));
  } else {
    out += fmt::format(
        "lag {} (long unit): thread {}, unit {}, started {}, {} {:.2f} s, {}, CPU {}, {} "
        "record{}\n",
        number, lag.tid, lag.unit, Utc(lag.start_ns), lag.ended ? "ran" : "running at least",
        static_cast<double>(lag.duration_ns) / 1e9, lag.ended ? "ended" : "no end record (open)",
        Percent(lag.cpu_permille), lag.records, lag.records == 1 ? "" : "s");
  }
  if (lag.stack_id == 0) {
    out += fmt::format("  no stack sampled ({} samples, {} missed)\n", lag.samples.size(),
                       lag.samples_missed);
    return;
  }
  out += fmt::format("  most time-consuming stack {}: {} of {} samples ({} missed)\n", lag.stack_id,
                     lag.repeats, lag.samples.size(), lag.samples_missed);
  AppendStackLines(out, lag.frames, max_frames, "    ");
}

}  // namespace

std::string LagReportToText(const LagReport& r, const LagTextOptions& options) {
  std::string out = fmt::format("Lag report: {}\n", r.directory);
  if (!r.present) {
    return out + "no lag file: the lag monitor did not run (no heapgraph_work_begin)\n";
  }
  out += Options(r.header);
  size_t open = 0;
  for (const LagEntry& lag : r.lags) open += lag.open ? 1 : 0;
  out += fmt::format("{} lag{}, {} without an end record\n", r.lags.size(),
                     r.lags.size() == 1 ? "" : "s", open);
  for (size_t i = 0; i < r.lags.size(); ++i) AppendLag(out, i + 1, r.lags[i], options.max_frames);
  if (r.torn) {
    out += "torn: the last record was torn (the process was killed while writing it); not read\n";
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace heapgraph::report
