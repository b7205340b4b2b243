#include "report/FoomReportJson.h"

#include <fmt/format.h>
#include <string.h>

#include "report/AddressHex.h"
#include "report/BuildIdHex.h"
#include "report/FrameJson.h"

namespace heapgraph::report {
namespace {

using Json = nlohmann::ordered_json;

Json Counter(uint64_t v) {
  return v == format::kUnknownCounter ? Json(nullptr) : Json(v);
}

std::string SignalName(uint32_t signal) {
  if (signal == 0) return "";
  const char* abbrev = sigabbrev_np(static_cast<int>(signal));
  return abbrev != nullptr ? std::string("SIG") + abbrev : fmt::format("signal {}", signal);
}

const char* AppStateName(uint32_t state) {
  switch (state) {
    case format::kAppForeground:
      return "foreground";
    case format::kAppBackground:
      return "background";
    default:
      return "unknown";
  }
}

Json ExitJson(const ExitRecord& e) {
  return {{"kind", e.kind},
          {"reason", e.reason},
          {"source", e.source},
          {"signal", e.signal},
          {"signal_name", SignalName(e.signal)},
          {"signal_code", e.signal_code},
          {"signal_address", AddressHex(e.signal_address)},
          {"exit_status", e.exit_status_known ? Json(e.exit_status) : Json(nullptr)},
          {"oom_kills_before", Counter(e.oom_kills_before)},
          {"oom_kills_now", Counter(e.oom_kills_now)},
          {"stall_ms", e.stall_ms},
          {"foreground", e.foreground}};
}

Json SessionJson(const std::optional<SessionInfo>& s) {
  if (!s) return nullptr;
  Json j = {{"pid", s->pid},
            {"executable", s->executable},
            {"start_time_ns", s->start_time_ns},
            {"sequence", s->sequence}};
  if (s->has_record) {
    const format::SessionRecord& r = s->record;
    j["boot_id"] = std::string(r.boot_id);
    j["build_id"] = BuildIdHex(r.exe_build_id, r.exe_build_id_len);
    j["heartbeat_count"] = r.heartbeat_count;
    j["heartbeat_interval_ms"] = r.heartbeat_interval_ms;
    j["app_state"] = AppStateName(r.app_state);
    j["oom_counter_path"] = std::string(r.oom_counter_path);
  }
  return j;
}

Json CrashLagJson(const std::optional<CrashLag>& c) {
  if (!c) return nullptr;
  return {{"tid", c->tid},
          {"duration_ns", c->duration_ns},
          {"stack_id", c->stack.stack_id},
          {"repeats", c->repeats},
          {"samples", c->samples},
          {"frames", FramesJson(c->stack.frames)}};
}

Json CategoryJson(size_t rank, const FoomCategory& c) {
  Json stacks = Json::array();
  for (const FoomStack& s : c.stacks) {
    stacks.push_back({{"stack_id", s.stack_id},
                      {"count", s.count},
                      {"bytes", s.bytes},
                      {"sampled_blocks", s.sampled},
                      {"count_error", s.count_error},
                      {"bytes_error", s.bytes_error},
                      {"frames", FramesJson(s.frames)}});
  }
  return {{"rank", rank},
          {"name", c.name},
          {"kind", c.kind},
          {"count", c.count},
          {"bytes", c.bytes},
          {"sampled_blocks", c.sampled},
          {"count_error", c.count_error},
          {"bytes_error", c.bytes_error},
          {"stack_count", c.stack_count},
          {"suspect", !c.suspect_reasons.empty()},
          {"suspect_reasons", c.suspect_reasons},
          {"stacks", std::move(stacks)}};
}

Json TornJson(const std::vector<TornNode>& torn) {
  Json out = Json::array();
  for (const TornNode& t : torn) {
    out.push_back({{"tree", t.tree == TreeKind::kHeap ? "heap.tree" : "vm.tree"},
                   {"shard", t.shard},
                   {"index", t.index == format::kRehashing ? Json("rehashing") : Json(t.index)},
                   {"marked", t.marked},
                   {"records", t.records}});
  }
  return out;
}

Json PressureJson(const std::optional<PressureTimeline>& p) {
  if (!p) return nullptr;
  const format::PressureHeader& h = p->header();
  Json sources = Json::array();
  if (h.sources & format::kSourceRss) sources.push_back("rss");
  if (h.sources & format::kSourceCgroup) sources.push_back("cgroup");
  if (h.sources & format::kSourcePsi) sources.push_back("psi");
  Json watermarks = Json::array();
  for (uint32_t i = 0; i < h.watermark_count && i < format::kMaxWatermarks; ++i) {
    watermarks.push_back(h.watermarks[i]);
  }
  Json entries = Json::array();
  for (const PressureEntry& e : p->entries()) {
    const format::PressureRecord& r = e.record;
    entries.push_back({{"watermark", r.watermark},
                       {"percent", r.percent},
                       {"trigger", r.trigger == format::kTriggerPsi ? "psi" : "poll"},
                       {"realtime_ns", r.realtime_ns},
                       {"elapsed_ns", r.elapsed_ns},
                       {"limit", r.limit},
                       {"rss", r.rss},
                       {"cgroup_current", r.cgroup_current},
                       {"cgroup_max", r.cgroup_max},
                       {"oom_events", r.oom_events},
                       {"oom_kills", r.oom_kills},
                       {"heap_blocks", r.heap_blocks},
                       {"heap_bytes", r.heap_bytes},
                       {"vm_blocks", r.vm_blocks},
                       {"vm_bytes", r.vm_bytes},
                       {"sequence", r.sequence},
                       {"refresh_ns", r.refresh_ns},
                       {"types_written", r.types_written != 0},
                       {"categories", e.categories.size()}});
  }
  return {{"configured_limit", h.configured_limit},
          {"sources", std::move(sources)},
          {"cgroup_dir", std::string(h.cgroup_dir, strnlen(h.cgroup_dir, sizeof(h.cgroup_dir)))},
          {"watermarks", std::move(watermarks)},
          {"sample_mean", h.sample_mean},
          {"truncated", p->truncated()},
          {"entries", std::move(entries)}};
}

}  // namespace

Json FoomReportToJson(const FoomReport& r) {
  Json categories = Json::array();
  for (size_t i = 0; i < r.categories.size(); ++i) {
    categories.push_back(CategoryJson(i + 1, r.categories[i]));
  }
  Json feature = nullptr;
  if (r.feature) {
    feature = {{"caller1", r.feature->caller1},
               {"caller2", r.feature->caller2},
               {"category", r.feature->category},
               {"reason", r.feature->reason}};
  }
  return {{"format", kFoomReportFormat},
          {"version", kFoomReportVersion},
          {"directory", r.directory},
          {"exit", ExitJson(r.exit)},
          {"session", SessionJson(r.session)},
          {"summary",
           {{"live_blocks", r.live.count},
            {"live_bytes", r.live.bytes},
            {"sample_mean", r.sample_mean},
            {"sampled_blocks", r.live.sampled},
            {"live_blocks_error", r.live.count_error},
            {"live_bytes_error", r.live.bytes_error},
            {"categories", r.categories.size()},
            {"dropped", r.dropped},
            {"torn_entries", r.torn.size()},
            {"torn_records", r.torn_records}}},
          {"torn", TornJson(r.torn)},
          {"categories", std::move(categories)},
          {"feature", std::move(feature)},
          {"pressure", PressureJson(r.pressure)},
          {"crash_lag", CrashLagJson(r.crash_lag)},
          {"warnings", r.warnings}};
}

Json FoomReportToRecord(const FoomReport& r) {
  std::string suspects;
  for (const FoomCategory& c : r.categories) {
    if (c.suspect_reasons.empty()) continue;
    if (!suspects.empty()) suspects += "|";
    suspects += c.name;
  }
  const FoomCategory* top = r.categories.empty() ? nullptr : &r.categories.front();
  bool v2 = r.session && r.session->has_record;
  const PressureEntry* last =
      r.pressure && !r.pressure->entries().empty() ? &r.pressure->entries().back() : nullptr;
  return {
      {"format", kFoomRecordFormat},
      {"version", kFoomReportVersion},
      {"directory", r.directory},
      {"pid", r.session ? r.session->pid : 0},
      {"executable", r.session ? r.session->executable : ""},
      {"build_id",
       v2 ? BuildIdHex(r.session->record.exe_build_id, r.session->record.exe_build_id_len) : ""},
      {"start_time_ns", r.session ? r.session->start_time_ns : 0},
      {"exit_kind", r.exit.kind},
      {"exit_reason", r.exit.reason},
      {"signal", r.exit.signal},
      {"live_blocks", r.live.count},
      {"live_bytes", r.live.bytes},
      {"sample_mean", r.sample_mean},
      {"live_blocks_error", r.live.count_error},
      {"live_bytes_error", r.live.bytes_error},
      {"torn_records", r.torn_records},
      {"top_category", top != nullptr ? top->name : ""},
      {"top_category_count", top != nullptr ? top->count : 0},
      {"top_category_bytes", top != nullptr ? top->bytes : 0},
      {"top_category_count_error", top != nullptr ? top->count_error : 0.0},
      {"top_category_bytes_error", top != nullptr ? top->bytes_error : 0.0},
      {"watermarks_reached", r.pressure ? r.pressure->entries().size() : 0},
      {"last_watermark", last != nullptr ? last->record.watermark : 0},
      {"last_watermark_rss", last != nullptr ? last->record.rss : 0},
      {"suspects", suspects},
      {"caller1", r.feature ? r.feature->caller1 : ""},
      {"caller2", r.feature ? r.feature->caller2 : ""},
      {"category", r.feature ? r.feature->category : ""},
      {"reason", r.feature ? r.feature->reason : ""}};
}

std::string FoomReportJsonText(const FoomReport& report) {
  return FoomReportToJson(report).dump(2, ' ', false, Json::error_handler_t::replace);
}

std::string FoomReportRecordLine(const FoomReport& report) {
  return FoomReportToRecord(report).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace heapgraph::report
