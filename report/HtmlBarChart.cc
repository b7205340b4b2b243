#include "report/HtmlBarChart.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/HtmlEscape.h"

namespace heapgraph::report {

std::string HtmlBarChart(const std::vector<BarRow>& rows) {
  uint64_t max = 1;
  for (const BarRow& r : rows) max = std::max(max, r.value);
  std::string out = "<table class=\"chart\">\n";
  for (const BarRow& r : rows) {
    double width = 30.0 * static_cast<double>(r.value) / static_cast<double>(max);
    out += fmt::format(
        "<tr><td>{}</td><td><span class=\"bar{}\" style=\"width:{:.2f}em\"></span></td>"
        "<td class=\"num\">{}</td></tr>\n",
        HtmlEscape(r.label), r.marked ? " leak" : "", std::max(width, 0.1),
        HtmlEscape(r.value_text));
  }
  return out + "</table>\n";
}

}  // namespace heapgraph::report
