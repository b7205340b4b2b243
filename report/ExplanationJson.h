// report/: the JSON form of explanations (report/Explanation.h), the leak report's "explain" array
// (docs/report-format.md), and back: `heapgraph explain REPORT.json` reads a saved check's
// explanations from it. Addresses and offsets are "0x..." strings, as in the rest of the report.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "report/Explanation.h"

namespace heapgraph::report {

nlohmann::ordered_json ExplanationsToJson(const std::vector<Explanation>& explanations);
// The inverse of ExplanationsToJson; throws nlohmann::json::exception on a document of another
// shape (a missing key, a value of the wrong type).
std::vector<Explanation> ExplanationsFromJson(const nlohmann::ordered_json& array);

}  // namespace heapgraph::report
