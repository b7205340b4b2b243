#include "report/LagReportJson.h"

#include "report/FrameJson.h"

namespace heapgraph::report {
namespace {

using Json = nlohmann::ordered_json;

Json OptionsJson(const LagReport& r) {
  if (!r.present) return nullptr;
  const format::LagHeader& h = r.header;
  return {{"interval_ms", h.interval_ms},
          {"threshold_ms", h.threshold_ms},
          {"sample_ms", h.sample_ms},
          {"ring", h.ring},
          {"cpu_percent", h.cpu_percent}};
}

Json LagJson(const LagEntry& lag) {
  return {{"kind", lag.kind},
          {"tid", lag.tid},
          {"unit", lag.unit},
          {"start_ns", lag.start_ns},
          {"last_ns", lag.last_ns},
          {"duration_ns", lag.duration_ns},
          {"ended", lag.ended},
          {"open", lag.open},
          {"cpu_permille", lag.cpu_permille},
          {"records", lag.records},
          {"stack_id", lag.stack_id},
          {"repeats", lag.repeats},
          {"samples", lag.samples.size()},
          {"samples_missed", lag.samples_missed},
          {"sample_ids", lag.samples},
          {"frames", FramesJson(lag.frames)}};
}

}  // namespace

Json LagReportToJson(const LagReport& r) {
  Json lags = Json::array();
  for (const LagEntry& lag : r.lags) lags.push_back(LagJson(lag));
  return {{"format", kLagReportFormat}, {"version", kLagReportVersion}, {"directory", r.directory},
          {"present", r.present},       {"options", OptionsJson(r)},    {"torn", r.torn},
          {"lags", std::move(lags)},    {"warnings", r.warnings}};
}

std::string LagReportJsonText(const LagReport& report) {
  return LagReportToJson(report).dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace heapgraph::report
