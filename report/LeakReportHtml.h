// report/: a LeakReport as one self-contained HTML page for a bug ticket (docs/report-format.md):
// the verdict and totals; the direct leaks as groups (one per record, largest retained first,
// sortable and filterable by the page's inline script), each with its type, blocks (addresses and
// sizes: heap contents are never in a report), its application frames (CallerSelector's Caller1
// on, outside system libraries; the whole stack folded below) and the source lines around the
// first application frame with a line when the file is on disk (SourceSnippet); the indirect
// leaks folded; every retain cycle drawn by Graphviz (CycleGraphSvg) with its typed path and the
// edge to break, reachable ones with their root and retention path; the categories as a bar
// chart. Every string from the report is escaped (HtmlEscape). Usable at any size: at most
// max_groups groups and max_cycles pictures are on the page, the rest counted (the JSON has all).
#pragma once

#include <string>

#include "report/HtmlPage.h"
#include "report/LeakReport.h"

namespace heapgraph::report {

std::string LeakReportHtml(const LeakReport& report, const HtmlOptions& options = {});

}  // namespace heapgraph::report
