#include "report/StackLines.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/FoomReport.h"

namespace heapgraph::report {

void AppendStackLines(std::string& out, const std::vector<ReportFrame>& frames, size_t max_frames,
                      const std::string& indent) {
  size_t shown = max_frames == 0 ? frames.size() : std::min(max_frames, frames.size());
  for (size_t i = 0; i < shown; ++i) {
    out += fmt::format("{}#{} {:#x} {}\n", indent, i, frames[i].address, FrameLabel(frames[i]));
  }
  if (shown < frames.size()) {
    out += fmt::format("{}... {} more frames; see JSON\n", indent, frames.size() - shown);
  }
}

}  // namespace heapgraph::report
