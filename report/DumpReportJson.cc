#include "report/DumpReportJson.h"

#include <utility>

namespace heapgraph::report {
namespace {

using Json = nlohmann::json;

Json EstimateJson(const SampleEstimate& e) {
  return {{"count", e.count()},
          {"count_error", e.count_error()},
          {"bytes", e.bytes()},
          {"bytes_error", e.bytes_error()}};
}

Json SummaryJson(const DumpReport& r) {
  Json j = {{"live_blocks", r.live_blocks},
            {"live_bytes", r.live_bytes},
            {"unique_stacks", r.unique_stacks},
            {"torn", r.torn.size()},
            {"dropped", r.dropped},
            {"stacks_dropped", r.stacks_dropped},
            {"modules", r.modules},
            {"sample_mean", r.sample_mean}};
  if (r.sample_mean != 0) j["estimate"] = EstimateJson(r.live);
  return j;
}

Json SessionJson(const std::optional<SessionInfo>& s) {
  if (!s) return nullptr;
  return {{"pid", s->pid},
          {"executable", s->executable},
          {"start_time_ns", s->start_time_ns},
          {"state", SessionStateName(s->state)},
          {"sequence", s->sequence}};
}

Json TornJson(const std::vector<TornNode>& torn) {
  Json out = Json::array();
  for (const TornNode& t : torn) {
    out.push_back({{"tree", TreeFileName(t.tree)},
                   {"shard", t.shard},
                   {"index", t.index},
                   {"marked", t.marked},
                   {"records", t.records}});
  }
  return out;
}

Json AddressJson(const DumpAddress& a) {
  const ReportFrame& where = a.where();
  Json j = {{"address", where.address}, {"module", nullptr}};
  if (a.in_module()) {
    j["module"] = where.module_path;
    j["offset"] = where.offset;
    j["build_id"] = where.build_id;
  }
  j["source"] = Json::array();
  if (!a.symbolized()) return j;
  for (const ReportFrame& f : a.frames) {
    j["source"].push_back(
        {{"function", f.function}, {"file", f.file}, {"line", f.line}, {"inlined", f.inlined}});
  }
  return j;
}

Json GroupJson(const DumpGroup& d) {
  const StackGroup& g = d.group;
  Json frames = Json::array();
  for (const DumpAddress& a : d.addresses) frames.push_back(AddressJson(a));
  Json j = {{"rank", d.rank},   {"stack", g.stack},       {"count", g.count},
            {"bytes", g.bytes}, {"category", g.category}, {"frames", std::move(frames)}};
  if (g.estimate.mean() != 0) j["estimate"] = EstimateJson(g.estimate);
  return j;
}

}  // namespace

Json DumpReportToJson(const DumpReport& r) {
  Json groups = Json::array();
  for (const DumpGroup& g : r.groups) groups.push_back(GroupJson(g));
  return {{"directory", r.directory},          {"summary", SummaryJson(r)},
          {"session", SessionJson(r.session)}, {"warnings", r.warnings},
          {"torn", TornJson(r.torn)},          {"groups", std::move(groups)}};
}

std::string DumpReportJsonText(const DumpReport& report) {
  return DumpReportToJson(report).dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace heapgraph::report
