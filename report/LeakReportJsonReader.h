// report/: a saved leak report's JSON (report/LeakReportJson.h, docs/report-format.md) read back
// into a LeakReport, so that `heapgraph report` re-renders it (text, HTML, SARIF) on any machine,
// without the recording. Reads every version up to kLeakReportVersion. Everything the renderers
// index is checked: a member's record, a cycle's representative and path refer to entries that
// exist. Frames are shared as the writer's FrameList shares them only within one record.
#pragma once

#include <nlohmann/json.hpp>

#include "report/LeakReport.h"

namespace heapgraph::report {

// Throws ReportJsonError (report/ReportJsonFields.h) with one line on a document that is not a
// heapgraph leak report, of an unknown version, or with a field missing, mistyped, out of range
// or referring to nothing.
LeakReport LeakReportFromJson(const nlohmann::ordered_json& document);

}  // namespace heapgraph::report
