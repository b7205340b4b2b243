// report/: the machine-readable form of a LeakReport (docs/report-format.md is the schema). It
// always holds every record and every cycle, whatever the text form elides.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/LeakReport.h"

namespace heapgraph::report {

inline constexpr char kLeakReportFormat[] = "heapgraph-leak-report";
// Bumped only when a field is removed, renamed or changes meaning; added fields keep the version.
// Version 2: cycles may be reachable (leaked false, members' leak null), typed cycles' paths start
// at their canonical member.
inline constexpr int kLeakReportVersion = 2;

// The document {"format", "version", "summary", "leaks", "cycles", "categories", "scan",
// "recording_dir", "warnings"}. Addresses and offsets are "0x..." strings: JSON numbers lose 64-bit
// precision in most readers. Sizes and counts are numbers. Keys keep the documented order.
nlohmann::ordered_json LeakReportToJson(const LeakReport& report);

// LeakReportToJson(report).dump(2), byte for byte (the tests compare them), written without
// building the tree of the leak records: a report of thousands of stacks is mostly their frames,
// and a tree of them costs several allocations per field. Invalid UTF-8 in a string becomes
// U+FFFD (dump() would throw).
std::string LeakReportJsonText(const LeakReport& report);

}  // namespace heapgraph::report
