// report/: one symbolized frame as the FOOM and lag reports' JSON documents hold it:
// {"address": "0x...", "module", "offset": "0x...", "build_id", "function", "file", "line",
// "inlined"} (docs/foom-report.md); and a stack's frames as an array of those, innermost first.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "report/ReportFrame.h"

namespace heapgraph::report {

nlohmann::ordered_json FrameJson(const ReportFrame& frame);
nlohmann::ordered_json FramesJson(const std::vector<ReportFrame>& frames);

}  // namespace heapgraph::report
