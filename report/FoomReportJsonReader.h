// report/: a saved FOOM report's JSON document (report/FoomReportJson.h, docs/foom-report.md) read
// back into a FoomReport, so that `heapgraph report` re-renders it (text, HTML) on any machine,
// without the recording directory. What the document does not keep stays empty: a pressure
// entry's category totals are only counted (default entries), a session's binary record holds only
// the fields the document names.
#pragma once

#include <nlohmann/json.hpp>

#include "report/FoomReport.h"

namespace heapgraph::report {

// Throws ReportJsonError (report/ReportJsonFields.h) with one line on a document that is not a
// heapgraph FOOM report, of an unknown version, or with a field missing, mistyped or out of range.
FoomReport FoomReportFromJson(const nlohmann::ordered_json& document);

}  // namespace heapgraph::report
