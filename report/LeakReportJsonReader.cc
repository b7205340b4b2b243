#include "report/LeakReportJsonReader.h"

#include <fmt/format.h>

#include <utility>

#include "report/BaseName.h"
#include "report/ExplanationJson.h"
#include "report/LeakReportJson.h"
#include "report/ReportJsonFields.h"

namespace heapgraph::report {
namespace {

ReportFrame FrameFrom(const ReportJsonFields& f) {
  ReportFrame frame;
  frame.address = f.Address("address");
  frame.module = f.StringOrNull("module");
  frame.module_path = f.StringOrNull("module_path");
  frame.build_id = f.StringOrNull("build_id");
  frame.offset = f.AddressOrNull("offset");
  frame.function = f.StringOrNull("function");
  frame.file = f.StringOrNull("file");
  frame.line = f.IsNull("line") ? 0 : f.Signed32("line");
  if (frame.file.empty()) frame.line = 0;  // the model: file empty exactly when line is 0
  if (frame.line == 0) frame.file.clear();
  frame.inlined = f.Bool("inlined");
  if (frame.module.empty() && !frame.module_path.empty())
    frame.module = BaseName(frame.module_path);
  return frame;
}

LeakRecord RecordFrom(const ReportJsonFields& r) {
  LeakRecord record;
  std::string kind = r.String("kind");
  if (kind != "direct" && kind != "indirect") r.Fail("kind", "neither direct nor indirect");
  record.kind = kind == "direct" ? LeakKind::kDirect : LeakKind::kIndirect;
  record.size = r.Unsigned("size");
  record.count = r.Unsigned("count");
  record.block_size = r.Has("block_size") ? r.Unsigned("block_size") : 0;
  record.retained_bytes = r.Has("retained_bytes") ? r.Unsigned("retained_bytes") : 0;
  record.stack_id = r.Unsigned32("stack_id");
  for (const ReportJsonFields& f : r.Objects("stack")) record.stack.push_back(FrameFrom(f));
  record.type = r.String("type");
  record.examples = r.Addresses("examples");
  record.suppressed = r.StringOrNull("suppressed");
  if (r.Has("preview")) {
    record.preview = r.String("preview");
    if (record.preview.size() % 2 != 0 ||
        record.preview.find_first_not_of("0123456789abcdef") != std::string::npos) {
      r.Fail("preview", "not lower-case hex bytes");
    }
  }
  return record;
}

std::optional<CycleRoot> RootFrom(const ReportJsonFields& c) {
  std::optional<ReportJsonFields> r = c.ObjectOrNull("root");
  if (!r) return std::nullopt;
  CycleRoot root;
  root.kind = r->String("kind");
  root.thread = r->IsNull("thread") ? 0 : r->Signed32("thread");
  root.module = r->StringOrNull("module");
  root.address = r->AddressOrNull("address");
  for (const ReportJsonFields& s : r->Objects("path")) {
    root.path.push_back({.address = s.Address("address"),
                         .size = s.Unsigned("size"),
                         .type = s.String("type"),
                         .field = s.StringOrNull("field")});
  }
  return root;
}

// An index into a vector of `size` entries.
size_t IndexFrom(uint64_t value, size_t size, const ReportJsonFields& at, const char* key) {
  if (value >= size) at.Fail(key, fmt::format("index {} out of range ({} entries)", value, size));
  return static_cast<size_t>(value);
}

LeakCycle CycleFrom(const ReportJsonFields& c, size_t records) {
  LeakCycle cycle;
  cycle.kind = c.String("kind");
  cycle.leaked = c.Bool("leaked");
  cycle.typed = c.Bool("typed");
  for (const ReportJsonFields& m : c.Objects("members")) {
    CycleMember member;
    member.address = m.Address("address");
    member.size = m.Unsigned("size");
    member.type = m.String("type");
    member.stack_id = m.Unsigned32("stack_id");
    member.record = m.IsNull("leak") ? CycleMember::kNoRecord
                                     : IndexFrom(m.Unsigned("leak"), records, m, "leak");
    member.field = m.StringOrNull("field");
    cycle.members.push_back(std::move(member));
  }
  if (cycle.members.empty()) c.Fail("members", "empty");
  cycle.retained_bytes = c.Unsigned("retained_bytes");
  ReportJsonFields rep = c.Object("representative");
  if (!rep.IsNull("member")) {
    cycle.representative = IndexFrom(rep.Unsigned("member"), cycle.members.size(), rep, "member");
  }
  cycle.representative_reason = rep.String("reason");
  if (!rep.IsNull("retained_by")) cycle.retained_by = rep.Address("retained_by");
  for (uint64_t i : c.UnsignedArray("path")) {
    cycle.path.push_back(IndexFrom(i, cycle.members.size(), c, "path"));
  }
  cycle.root = RootFrom(c);
  return cycle;
}

LeakSummary SummaryFrom(const ReportJsonFields& s) {
  LeakSummary summary;
  summary.direct_blocks = s.Unsigned("direct_blocks");
  summary.indirect_blocks = s.Unsigned("indirect_blocks");
  summary.leaked_bytes = s.Unsigned("leaked_bytes");
  summary.direct_bytes = s.Unsigned("direct_bytes");
  summary.indirect_bytes = s.Unsigned("indirect_bytes");
  summary.cycles = s.Unsigned("cycles");
  summary.live_blocks = s.Unsigned("live_blocks");
  summary.live_bytes = s.Unsigned("live_bytes");
  summary.suppressed_blocks = s.Has("suppressed_blocks") ? s.Unsigned("suppressed_blocks") : 0;
  summary.suppressed_bytes = s.Has("suppressed_bytes") ? s.Unsigned("suppressed_bytes") : 0;
  return summary;
}

void ScanFrom(const ReportJsonFields& s, LeakReport& report) {
  report.ok = s.Bool("ok");
  report.error = s.Has("error") ? s.String("error") : std::string();
  report.notice = s.Has("notice") ? s.StringOrNull("notice") : std::string();
  report.timings.world_stopped_ms = s.Number("world_stopped_ms");
  report.timings.allocation_pause_ms = s.Number("allocation_pause_ms");
  report.timings.longest_allocation_wait_ms =
      s.Has("longest_allocation_wait_ms") ? s.Number("longest_allocation_wait_ms") : 0;
  report.timings.total_ms = s.Number("total_ms");
  scanner::ScanStats& stats = report.stats;
  stats.threads = s.Unsigned("threads");
  stats.live_blocks = s.Unsigned("live_blocks");
  stats.live_bytes = s.Unsigned("live_bytes");
  stats.root_ranges = s.Unsigned("root_ranges");
  stats.root_bytes = s.Unsigned("root_bytes");
  stats.heap_words_scanned = s.Unsigned("heap_words_scanned");
  stats.unreadable_pages = s.Has("unreadable_pages") ? s.Unsigned("unreadable_pages") : 0;
  stats.absent_pages = s.Has("absent_pages") ? s.Unsigned("absent_pages") : 0;
  stats.stop_method = s.String("stop_method");
  stats.in_stopped_world = s.Has("in_stopped_world") && s.Bool("in_stopped_world");
}

}  // namespace

LeakReport LeakReportFromJson(const nlohmann::ordered_json& document) {
  ReportJsonFields d(document, "");
  d.ExpectFormat(kLeakReportFormat, "leak report", kLeakReportVersion);
  LeakReport report;
  report.summary = SummaryFrom(d.Object("summary"));
  for (const ReportJsonFields& r : d.Objects("leaks")) report.leaks.push_back(RecordFrom(r));
  for (const ReportJsonFields& c : d.Objects("cycles")) {
    report.cycles.push_back(CycleFrom(c, report.leaks.size()));
  }
  for (const ReportJsonFields& r : d.Objects("categories")) {
    report.categories.push_back({.type = r.String("type"),
                                 .live_count = r.Unsigned("live_count"),
                                 .live_bytes = r.Unsigned("live_bytes"),
                                 .leaked_count = r.Unsigned("leaked_count"),
                                 .leaked_bytes = r.Unsigned("leaked_bytes")});
  }
  ScanFrom(d.Object("scan"), report);
  report.recording_dir = d.String("recording_dir");
  report.warnings = d.Strings("warnings");
  if (d.Has("suppressions_used")) {
    for (const ReportJsonFields& u : d.Objects("suppressions_used")) {
      report.suppressions_used.push_back(
          {.rule = u.String("rule"), .count = u.Unsigned("count"), .bytes = u.Unsigned("bytes")});
    }
  }
  if (d.Has("explain")) {
    try {
      report.explanations = ExplanationsFromJson(document["explain"]);
    } catch (const nlohmann::json::exception& e) {
      throw ReportJsonError(fmt::format("explain: not a list of explanations ({})", e.what()));
    }
  }
  return report;
}

}  // namespace heapgraph::report
