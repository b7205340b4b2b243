// report/: text made safe for an HTML page or inline SVG, for the pages of `heapgraph report
// --html` (LeakReportHtml, FoomReportHtml, CycleGraphSvg). Every string from a report (function,
// type, file and module names, paths, reasons) goes through here before it reaches markup: & < > "
// and ' become character references, so it can neither open a tag nor leave an attribute value;
// control characters other than tab and newline, and every byte that is not valid UTF-8, become
// U+FFFD.
#pragma once

#include <string>
#include <string_view>

namespace heapgraph::report {

// Escaped for element content and for double- or single-quoted attribute values.
std::string HtmlEscape(std::string_view text);

}  // namespace heapgraph::report
