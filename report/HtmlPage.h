// report/: the shell of a self-contained HTML page of `heapgraph report --html`: the document, its
// inline style sheet and its one inline script (no network, no external script, style or font: it
// opens from a ticket attachment without internet). The script sorts and filters the element
// with id "groups": each child carries data-retained, data-size, data-count (numbers) and
// data-text (what the filter box matches); a page without it gets no controls' effect. `title`
// is escaped here; `body` is markup the caller has escaped.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace heapgraph::report {

// What the leak and FOOM pages show (both take the same options).
struct HtmlOptions {
  size_t max_groups = 1000;              // direct records listed (largest first)
  size_t max_cycles = 100;               // cycles drawn
  size_t max_categories = 30;            // bars of the categories chart (FOOM: with stacks)
  size_t max_stacks = 20;                // FOOM: stacks listed per category
  int source_context = 3;                // lines before and after a frame's line
  std::vector<std::string> source_dirs;  // where else to look for source files
  std::string json_report;               // the JSON report's path, named on the page
};

std::string HtmlPage(const std::string& title, const std::string& body);

// The filter box and sort menu for the "groups" element.
std::string GroupControls();

}  // namespace heapgraph::report
