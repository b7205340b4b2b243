// report/: the text form of explanations (report/Explanation.h): the leak text report's "Why
// reachable" section and `heapgraph explain`'s output (docs/report-format.md shows an example).
#pragma once

#include <string>
#include <vector>

#include "report/Explanation.h"

namespace heapgraph::report {

// One paragraph per target; "" when there is none.
std::string FormatExplanations(const std::vector<Explanation>& explanations);

}  // namespace heapgraph::report
