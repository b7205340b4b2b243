// report/: the machine-readable form of a DumpReport, as `heapgraph dump --json` prints it: one
// object {"directory", "summary", "session", "warnings", "torn", "groups"} with its keys sorted
// (nlohmann::json's order). Each group holds {"rank", "stack", "count", "bytes", "category",
// "frames"} and, when sampled, "estimate"; each frame is one return address {"address", "module"
// (null outside every module), "offset", "build_id", "source": [{"function", "file", "line",
// "inlined"}, ...]}. Addresses and offsets are numbers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/DumpReport.h"

namespace heapgraph::report {

nlohmann::json DumpReportToJson(const DumpReport& report);

// The document dumped with an indent of 2. Strings read from the recording (module paths, the
// executable) that are not valid UTF-8 have the bad bytes replaced by U+FFFD.
std::string DumpReportJsonText(const DumpReport& report);

}  // namespace heapgraph::report
