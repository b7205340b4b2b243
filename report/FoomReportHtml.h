// report/: a FoomReport as one self-contained HTML page for a bug ticket (docs/foom-report.md):
// how the run ended (the exit classification with its evidence), the suspect (the feature value
// Caller1 / Caller2 / Category / Reason), the memory-pressure time line as an inline SVG line
// chart (RSS and heap bytes over time, the watermarks as dashed lines), the categories as a bar
// chart (suspects red), the top stacks of the top categories (application frames, the rest
// folded), the lag in progress at death. Every string from the report is escaped (HtmlEscape).
#pragma once

#include <string>

#include "report/FoomReport.h"
#include "report/HtmlPage.h"

namespace heapgraph::report {

std::string FoomReportHtml(const FoomReport& report, const HtmlOptions& options = {});

// The time line chart alone (exposed for tests): an <svg> element, or "" without entries.
std::string PressureChartSvg(const PressureTimeline& timeline);

}  // namespace heapgraph::report
