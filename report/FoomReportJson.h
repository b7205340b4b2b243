// report/: the machine-readable forms of a FoomReport (docs/foom-report.md is the schema): the full
// document, and one flat JSON object per report (scalars only) to load many reports into a SQL
// engine as one table for fleet-wide clustering by the feature value.
#pragma once

#include <nlohmann/json.hpp>

#include "report/FoomReport.h"

namespace heapgraph::report {

inline constexpr char kFoomReportFormat[] = "heapgraph-foom-report";
inline constexpr char kFoomRecordFormat[] = "heapgraph-foom-record";
// Bumped only when a field is removed, renamed or changes meaning.
inline constexpr int kFoomReportVersion = 1;

nlohmann::ordered_json FoomReportToJson(const FoomReport& report);
// The one-line record: {"format", "version", "directory", "pid", ..., "caller1", "caller2",
// "category", "reason"}; dump() it without indentation.
nlohmann::ordered_json FoomReportToRecord(const FoomReport& report);

// The serialized forms (indented document; record on one line). Strings read from a dump that are
// not valid UTF-8 (a corrupt path or reason) have the bad bytes replaced by U+FFFD.
std::string FoomReportJsonText(const FoomReport& report);
std::string FoomReportRecordLine(const FoomReport& report);

}  // namespace heapgraph::report
