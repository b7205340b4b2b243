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
// "recording_dir", "warnings"}, dumped with an indent of 2. Addresses and offsets are "0x..."
// strings: JSON numbers lose 64-bit precision in most readers. Sizes and counts are numbers. Keys
// keep the documented order. The leak records are written without building a tree of them: a
// report of thousands of stacks is mostly their frames, and a tree of them costs several
// allocations per field. Invalid UTF-8 in a string becomes U+FFFD.
std::string LeakReportJsonText(const LeakReport& report);

// LeakReportJsonText(report) parsed (keys in the same order); its dump(2) is that text again.
nlohmann::ordered_json LeakReportToJson(const LeakReport& report);

}  // namespace heapgraph::report
