// report/: any saved heapgraph JSON report, recognized and read back into its model: a leak
// check's (`heapgraph run --json`, the in-process check's json_report) or a FOOM report
// (`heapgraph foom --json`). The one entry of `heapgraph report` and of its fuzzer: the kind comes
// from the document's "format", the version is checked by the kind's reader.
#pragma once

#include <optional>
#include <string_view>

#include "report/FoomReport.h"
#include "report/LeakReport.h"

namespace heapgraph::report {

struct ReportDocument {
  std::optional<LeakReport> leak;  // exactly one of the two is set
  std::optional<FoomReport> foom;
};

// Throws ReportJsonError with one line: the text is no JSON (truncated, damaged), is no heapgraph
// report (a FOOM one-line record is named as such), is of an unknown version, or has a bad field.
ReportDocument ParseReportDocument(std::string_view text);

}  // namespace heapgraph::report
