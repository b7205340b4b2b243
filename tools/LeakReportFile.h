// tools/: reads a saved leak check's JSON report (report/LeakReportJson.h) for the commands that
// work on one (`explain`, `suppressions`). Throws std::runtime_error with one line ("cannot read
// F", "F: not a heapgraph leak report") when the file cannot be read or is no leak report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace heapgraph::tools {

nlohmann::ordered_json ReadLeakReportJson(const std::string& path);

}  // namespace heapgraph::tools
