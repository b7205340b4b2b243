#include "report/FrameJson.h"

#include <fmt/format.h>

namespace heapgraph::report {

nlohmann::ordered_json FrameJson(const ReportFrame& f) {
  return {{"address", fmt::format("{:#x}", f.address)},
          {"module", f.module_path},
          {"offset", fmt::format("{:#x}", f.offset)},
          {"build_id", f.build_id},
          {"function", f.function},
          {"file", f.file},
          {"line", f.line},
          {"inlined", f.inlined}};
}

nlohmann::ordered_json FramesJson(const std::vector<ReportFrame>& frames) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ReportFrame& f : frames) out.push_back(FrameJson(f));
  return out;
}

}  // namespace heapgraph::report
