#include "graph/CycleKind.h"

#include <algorithm>

namespace heapgraph::graph {

using scanner::types::ClosureKind;
using scanner::types::EdgeLabel;

const char* CycleKind(std::span<const CycleStep> steps) {
  auto labelled = [&](EdgeLabel label) {
    return std::any_of(steps.begin(), steps.end(),
                       [&](const CycleStep& s) { return s.label == label; });
  };
  auto through = [&](ClosureKind closure) {
    return std::any_of(steps.begin(), steps.end(),
                       [&](const CycleStep& s) { return s.closure == closure; });
  };
  if (labelled(EdgeLabel::kTimerTarget)) return "timer-target";
  if (labelled(EdgeLabel::kDelegate)) return "delegate";
  if (through(ClosureKind::kBlock)) return "block-self";
  if (through(ClosureKind::kFunction)) return "function-self";
  if (labelled(EdgeLabel::kSharedOwner) || labelled(EdgeLabel::kSharedManaged)) {
    return "shared_ptr";
  }
  return "generic";
}

}  // namespace heapgraph::graph
