#include "report/FoomReportJsonReader.h"

#include <fmt/format.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

#include "report/BaseName.h"
#include "report/FoomReportJson.h"
#include "report/ReportJsonFields.h"

namespace heapgraph::report {
namespace {

// A pressure entry's category totals: the pressure file's own bound (CategoryTotals' table).
constexpr uint64_t kMaxEntryCategories = (uint64_t{1} << 16) + 2;

uint64_t CounterFrom(const ReportJsonFields& f, const char* key) {
  return f.IsNull(key) ? format::kUnknownCounter : f.Unsigned(key);
}

ExitRecord ExitFrom(const ReportJsonFields& e) {
  ExitRecord exit;
  exit.kind = e.String("kind");
  exit.reason = e.String("reason");
  exit.source = e.String("source");
  exit.signal = e.Unsigned32("signal");
  exit.signal_code = e.Signed32("signal_code");
  exit.signal_address = e.Address("signal_address");
  exit.exit_status_known = !e.IsNull("exit_status");
  exit.exit_status = exit.exit_status_known ? e.Signed32("exit_status") : 0;
  exit.oom_kills_before = CounterFrom(e, "oom_kills_before");
  exit.oom_kills_now = CounterFrom(e, "oom_kills_now");
  exit.stall_ms = e.Unsigned("stall_ms");
  exit.foreground = e.Bool("foreground");
  return exit;
}

// Copies `text` into a fixed NUL-terminated field, cut to fit.
template <size_t N>
void CopyInto(char (&field)[N], const std::string& text) {
  size_t n = std::min(text.size(), N - 1);
  memcpy(field, text.data(), n);
  field[n] = '\0';
}

// The build-id's bytes from its lowercase hex; a malformed or oversized one is an error.
void BuildIdFrom(const ReportJsonFields& s, format::SessionRecord& record) {
  std::string hex = s.String("build_id");
  if (hex.size() % 2 != 0 || hex.size() / 2 > format::kMaxBuildId) s.Fail("build_id", "malformed");
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned byte = 0;
    if (sscanf(hex.substr(i, 2).c_str(), "%2x", &byte) != 1 || !isxdigit(hex[i]) ||
        !isxdigit(hex[i + 1])) {
      s.Fail("build_id", "not hexadecimal");
    }
    record.exe_build_id[i / 2] = static_cast<uint8_t>(byte);
  }
  record.exe_build_id_len = static_cast<uint32_t>(hex.size() / 2);
}

std::optional<SessionInfo> SessionFrom(const ReportJsonFields& d) {
  std::optional<ReportJsonFields> s = d.ObjectOrNull("session");
  if (!s) return std::nullopt;
  SessionInfo info;
  info.pid = s->Signed32("pid");
  info.executable = s->String("executable");
  info.start_time_ns = s->Unsigned("start_time_ns");
  info.sequence = s->Unsigned("sequence");
  info.has_record = s->Has("boot_id");
  if (info.has_record) {
    format::SessionRecord& r = info.record;
    CopyInto(r.boot_id, s->String("boot_id"));
    BuildIdFrom(*s, r);
    r.heartbeat_count = s->Unsigned("heartbeat_count");
    r.heartbeat_interval_ms = s->Unsigned32("heartbeat_interval_ms");
    std::string state = s->String("app_state");
    r.app_state = state == "foreground"   ? uint32_t{format::kAppForeground}
                  : state == "background" ? uint32_t{format::kAppBackground}
                                          : 0u;
    CopyInto(r.oom_counter_path, s->String("oom_counter_path"));
  }
  return info;
}

void TotalsFrom(const ReportJsonFields& t, FoomTotals& totals) {
  totals.count = t.Unsigned("count");
  totals.bytes = t.Unsigned("bytes");
  totals.sampled = t.Unsigned("sampled_blocks");
  totals.count_error = t.Number("count_error");
  totals.bytes_error = t.Number("bytes_error");
}

std::vector<ReportFrame> FramesFrom(const ReportJsonFields& s) {
  std::vector<ReportFrame> frames;
  for (const ReportJsonFields& f : s.Objects("frames")) {
    ReportFrame frame;
    frame.address = f.Address("address");
    frame.module_path = f.String("module");
    frame.module = BaseName(frame.module_path);
    frame.offset = f.Address("offset");
    frame.build_id = f.String("build_id");
    frame.function = f.String("function");
    frame.file = f.String("file");
    frame.line = f.Signed32("line");
    if (frame.file.empty() || frame.line <= 0) {
      frame.file.clear();
      frame.line = 0;
    }
    frame.inlined = f.Bool("inlined");
    frames.push_back(std::move(frame));
  }
  return frames;
}

FoomCategory CategoryFrom(const ReportJsonFields& c) {
  FoomCategory category;
  TotalsFrom(c, category);
  category.name = c.String("name");
  category.kind = c.String("kind");
  category.stack_count = c.Unsigned("stack_count");
  category.suspect_reasons = c.Strings("suspect_reasons");
  for (const ReportJsonFields& s : c.Objects("stacks")) {
    FoomStack stack;
    TotalsFrom(s, stack);
    stack.stack_id = s.Unsigned32("stack_id");
    stack.frames = FramesFrom(s);
    category.stacks.push_back(std::move(stack));
  }
  return category;
}

std::vector<TornNode> TornFrom(const ReportJsonFields& d) {
  std::vector<TornNode> torn;
  for (const ReportJsonFields& t : d.Objects("torn")) {
    TornNode node;
    node.tree = t.String("tree") == "vm.tree" ? TreeKind::kVm : TreeKind::kHeap;
    node.shard = t.Unsigned32("shard");
    node.index = t.IsString("index") && t.String("index") == "rehashing" ? format::kRehashing
                                                                         : t.Unsigned32("index");
    node.marked = t.Bool("marked");
    node.records = t.Unsigned("records");
    torn.push_back(node);
  }
  return torn;
}

format::PressureRecord PressureRecordFrom(const ReportJsonFields& e) {
  format::PressureRecord r = {};
  r.tag = format::kPressureRecordTag;
  r.watermark = e.Unsigned32("watermark");
  r.percent = e.Unsigned32("percent");
  r.trigger = e.String("trigger") == "psi" ? format::kTriggerPsi : format::kTriggerPoll;
  r.realtime_ns = e.Unsigned("realtime_ns");
  r.elapsed_ns = e.Unsigned("elapsed_ns");
  r.limit = e.Unsigned("limit");
  r.rss = e.Unsigned("rss");
  r.cgroup_current = e.Unsigned("cgroup_current");
  r.cgroup_max = e.Unsigned("cgroup_max");
  r.oom_events = e.Unsigned("oom_events");
  r.oom_kills = e.Unsigned("oom_kills");
  r.heap_blocks = e.Unsigned("heap_blocks");
  r.heap_bytes = e.Unsigned("heap_bytes");
  r.vm_blocks = e.Unsigned("vm_blocks");
  r.vm_bytes = e.Unsigned("vm_bytes");
  r.sequence = e.Unsigned("sequence");
  r.refresh_ns = e.Unsigned("refresh_ns");
  r.types_written = e.Bool("types_written") ? 1 : 0;
  return r;
}

std::optional<PressureTimeline> PressureFrom(const ReportJsonFields& d) {
  std::optional<ReportJsonFields> p = d.ObjectOrNull("pressure");
  if (!p) return std::nullopt;
  format::PressureHeader h = {};
  h.configured_limit = p->Unsigned("configured_limit");
  for (const std::string& source : p->Strings("sources")) {
    h.sources |= source == "rss"      ? format::kSourceRss
                 : source == "cgroup" ? format::kSourceCgroup
                 : source == "psi"    ? format::kSourcePsi
                                      : 0u;
  }
  CopyInto(h.cgroup_dir, p->String("cgroup_dir"));
  std::vector<uint64_t> marks = p->UnsignedArray("watermarks");
  if (marks.size() > format::kMaxWatermarks) p->Fail("watermarks", "too many");
  for (uint64_t mark : marks) {
    if (mark > 100) p->Fail("watermarks", "a percentage above 100");
    h.watermarks[h.watermark_count++] = static_cast<uint32_t>(mark);
  }
  h.sample_mean = p->Unsigned("sample_mean");
  std::vector<PressureEntry> entries;
  for (const ReportJsonFields& e : p->Objects("entries")) {
    PressureEntry entry;
    entry.record = PressureRecordFrom(e);
    uint64_t categories = e.Unsigned("categories");
    if (categories > kMaxEntryCategories) e.Fail("categories", "too many");
    entry.categories.resize(categories);
    entry.record.category_count = static_cast<uint32_t>(categories);
    entries.push_back(std::move(entry));
  }
  return PressureTimeline(h, std::move(entries), p->Bool("truncated"));
}

std::optional<CrashLag> CrashLagFrom(const ReportJsonFields& d) {
  std::optional<ReportJsonFields> c = d.ObjectOrNull("crash_lag");
  if (!c) return std::nullopt;
  CrashLag lag;
  lag.tid = c->Signed32("tid");
  lag.duration_ns = c->Unsigned("duration_ns");
  lag.repeats = c->Unsigned32("repeats");
  lag.samples = c->Unsigned32("samples");
  lag.stack.stack_id = c->Unsigned32("stack_id");
  lag.stack.frames = FramesFrom(*c);
  return lag;
}

}  // namespace

FoomReport FoomReportFromJson(const nlohmann::ordered_json& document) {
  ReportJsonFields d(document, "");
  d.ExpectFormat(kFoomReportFormat, "FOOM report", kFoomReportVersion);
  FoomReport report;
  report.directory = d.String("directory");
  report.exit = ExitFrom(d.Object("exit"));
  report.session = SessionFrom(d);
  ReportJsonFields summary = d.Object("summary");
  report.sample_mean = summary.Unsigned("sample_mean");
  report.live.count = summary.Unsigned("live_blocks");
  report.live.bytes = summary.Unsigned("live_bytes");
  report.live.sampled = summary.Unsigned("sampled_blocks");
  report.live.count_error = summary.Number("live_blocks_error");
  report.live.bytes_error = summary.Number("live_bytes_error");
  report.dropped = summary.Unsigned("dropped");
  report.torn_records = summary.Unsigned("torn_records");
  report.torn = TornFrom(d);
  for (const ReportJsonFields& c : d.Objects("categories")) {
    report.categories.push_back(CategoryFrom(c));
  }
  if (std::optional<ReportJsonFields> f = d.ObjectOrNull("feature")) {
    report.feature = FeatureValue{.caller1 = f->String("caller1"),
                                  .caller2 = f->String("caller2"),
                                  .category = f->String("category"),
                                  .reason = f->String("reason")};
  }
  report.pressure = PressureFrom(d);
  report.crash_lag = CrashLagFrom(d);
  report.warnings = d.Strings("warnings");
  return report;
}

}  // namespace heapgraph::report
