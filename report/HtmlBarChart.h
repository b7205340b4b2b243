// report/: a horizontal bar chart as an HTML table (CSS bars, no script), for the categories of
// the HTML leak and FOOM pages. Bars are scaled to the largest value; a marked row (leaked
// blocks, a suspect category) is drawn red. Labels and value texts are escaped here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapgraph::report {

struct BarRow {
  std::string label;
  uint64_t value = 0;
  std::string value_text;  // shown beside the bar
  bool marked = false;
};

std::string HtmlBarChart(const std::vector<BarRow>& rows);

}  // namespace heapgraph::report
