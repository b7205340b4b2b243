// report/: the machine-readable form of a LagReport (docs/lag.md is the schema):
// {"format": "heapgraph-lag-report", "version", "directory", "present", "options", "torn",
//  "lags": [{"kind", "tid", "unit", "start_ns", "last_ns", "duration_ns", "ended", "open",
//  "cpu_permille", "records", "stack_id", "repeats", "samples", "samples_missed", "sample_ids",
//  "frames"}], "warnings"}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/LagReport.h"

namespace heapgraph::report {

inline constexpr char kLagReportFormat[] = "heapgraph-lag-report";
// Bumped only when a field is removed, renamed or changes meaning.
inline constexpr int kLagReportVersion = 1;

nlohmann::ordered_json LagReportToJson(const LagReport& report);
// The indented document; strings that are not valid UTF-8 have the bad bytes replaced by U+FFFD.
std::string LagReportJsonText(const LagReport& report);

}  // namespace heapgraph::report
