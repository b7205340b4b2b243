#include "report/LeakReportJson.h"

#include <fmt/format.h>

#include <string>

namespace heapgraph::report {
namespace {

using json = nlohmann::ordered_json;

std::string Hex(uint64_t value) {
  return fmt::format("{:#x}", value);
}

json StringOrNull(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json FrameJson(const ReportFrame& f) {
  bool located = !f.module.empty() || !f.module_path.empty();
  bool positioned = !f.file.empty();
  return {{"address", Hex(f.address)},
          {"module", located ? json(f.module) : json(nullptr)},
          {"module_path", located ? json(f.module_path) : json(nullptr)},
          {"build_id", StringOrNull(f.build_id)},
          {"offset", located ? json(Hex(f.offset)) : json(nullptr)},
          {"function", StringOrNull(f.function)},
          {"file", positioned ? json(f.file) : json(nullptr)},
          {"line", positioned ? json(f.line) : json(nullptr)},
          {"inlined", f.inlined}};
}

json RecordJson(const LeakRecord& r) {
  json stack = json::array();
  for (const ReportFrame& f : r.stack) stack.push_back(FrameJson(f));
  json examples = json::array();
  for (uint64_t address : r.examples) examples.push_back(Hex(address));
  json j = {{"kind", LeakKindName(r.kind)}, {"size", r.size}, {"count", r.count}};
  if (r.block_size != 0) j["block_size"] = r.block_size;
  if (r.kind == LeakKind::kDirect) j["retained_bytes"] = r.retained_bytes;
  j["stack_id"] = r.stack_id;
  j["stack"] = std::move(stack);
  j["type"] = r.type;
  j["examples"] = std::move(examples);
  return j;
}

json MemberJson(const CycleMember& m) {
  return {{"address", Hex(m.address)},
          {"size", m.size},
          {"type", m.type},
          {"stack_id", m.stack_id},
          {"leak", m.record == CycleMember::kNoRecord ? json(nullptr) : json(m.record)},
          {"field", StringOrNull(m.field)}};
}

json RootJson(const std::optional<CycleRoot>& root) {
  if (!root) return nullptr;
  json path = json::array();
  for (const RetentionStep& s : root->path) {
    path.push_back({{"address", Hex(s.address)},
                    {"size", s.size},
                    {"type", s.type},
                    {"field", StringOrNull(s.field)}});
  }
  bool threaded = root->kind == "stack" || root->kind == "registers" || root->kind == "tls";
  return {{"kind", root->kind},
          {"thread", threaded ? json(root->thread) : json(nullptr)},
          {"module", StringOrNull(root->module)},
          {"address", root->address != 0 ? json(Hex(root->address)) : json(nullptr)},
          {"path", std::move(path)}};
}

json CategoryJson(const CategoryRow& r) {
  return {{"type", r.type},
          {"live_count", r.live_count},
          {"live_bytes", r.live_bytes},
          {"leaked_count", r.leaked_count},
          {"leaked_bytes", r.leaked_bytes}};
}

json RepresentativeJson(const LeakCycle& c) {
  if (!c.representative) {
    return {{"member", nullptr},
            {"address", nullptr},
            {"reason", c.representative_reason},
            {"retained_by", c.retained_by ? json(Hex(*c.retained_by)) : json(nullptr)}};
  }
  return {{"member", *c.representative},
          {"address", Hex(c.members[*c.representative].address)},
          {"reason", c.representative_reason},
          {"retained_by", nullptr}};
}

json CycleJson(const LeakCycle& c) {
  json members = json::array();
  for (const CycleMember& m : c.members) members.push_back(MemberJson(m));
  return {{"kind", c.kind},
          {"leaked", c.leaked},
          {"typed", c.typed},
          {"members", std::move(members)},
          {"representative", RepresentativeJson(c)},
          {"path", c.path},
          {"root", RootJson(c.root)}};
}

json SummaryJson(const LeakSummary& s) {
  return {{"direct_blocks", s.direct_blocks},   {"indirect_blocks", s.indirect_blocks},
          {"leaked_bytes", s.leaked_bytes},     {"direct_bytes", s.direct_bytes},
          {"indirect_bytes", s.indirect_bytes}, {"cycles", s.cycles},
          {"live_blocks", s.live_blocks},       {"live_bytes", s.live_bytes}};
}

json ScanJson(const LeakReport& r) {
  const scanner::ScanTimings& t = r.timings;
  const scanner::ScanStats& s = r.stats;
  json j = {{"ok", r.ok},
            {"world_stopped_ms", t.world_stopped_ms},
            {"allocation_pause_ms", t.allocation_pause_ms},
            {"total_ms", t.total_ms},
            {"threads", s.threads},
            {"live_blocks", s.live_blocks},
            {"live_bytes", s.live_bytes},
            {"root_ranges", s.root_ranges},
            {"root_bytes", s.root_bytes},
            {"heap_words_scanned", s.heap_words_scanned},
            {"unreadable_pages", s.unreadable_pages},
            {"stop_method", s.stop_method},
            {"notice", r.notice}};
  if (!r.ok) j["error"] = r.error;
  return j;
}

}  // namespace

json LeakReportToJson(const LeakReport& report) {
  json leaks = json::array();
  for (const LeakRecord& r : report.leaks) leaks.push_back(RecordJson(r));
  json cycles = json::array();
  for (const LeakCycle& c : report.cycles) cycles.push_back(CycleJson(c));
  json categories = json::array();
  for (const CategoryRow& r : report.categories) categories.push_back(CategoryJson(r));
  return {{"format", kLeakReportFormat},
          {"version", kLeakReportVersion},
          {"summary", SummaryJson(report.summary)},
          {"leaks", std::move(leaks)},
          {"cycles", std::move(cycles)},
          {"categories", std::move(categories)},
          {"scan", ScanJson(report)},
          {"recording_dir", report.recording_dir},
          {"warnings", report.warnings}};
}

}  // namespace heapgraph::report
