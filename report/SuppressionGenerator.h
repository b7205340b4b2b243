// report/: LeakSanitizer's --gen-suppressions, from a saved check: one "leak:<function>" rule per
// leak record of a JSON leak report (docs/report-format.md) that no rule suppressed yet, naming
// the record's first application frame: the first symbolized frame that is no allocation
// plumbing (CallerSelector::IsAllocationPlumbing: malloc & co., operator new, the C++ runtime,
// libc, libheapgraph). Duplicate rules are written once. A record without such a frame gets a
// comment line instead ("# <kind> leak of N byte(s): no symbolized application frame").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace heapgraph::report {

// The suppressions file text for `report` (a parsed leak report; throws nlohmann::json::exception
// when it lacks the "leaks" array or a record's fields).
std::string GenerateSuppressions(const nlohmann::ordered_json& report);

}  // namespace heapgraph::report
