// report/: a flame graph (Brendan Gregg's layout, drawn bottom up) of weighted stacks as inline
// SVG, for the FOOM page's top stacks: the outermost frame at the bottom, each frame a box as wide
// as the bytes of the stacks passing through it, callees stacked above their callers; stacks with
// the same frames from the bottom share boxes. Static SVG with a <title> per box (the full label
// and its bytes: the browser's tooltip), no script. Every label is escaped here. Boxes narrower
// than a pixel are left out (their bytes still count in their callers); at most kMaxDepth rows.
// The layout is a partition of an interval, not graph layout, so it needs no library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapgraph::report {

struct FlameStack {
  std::vector<std::string> frames;  // outermost first; the last one is drawn on top
  uint64_t bytes = 0;
  bool marked = false;  // drawn in the warning colour (a suspect category's stack)
};

inline constexpr size_t kFlameMaxDepth = 48;

// Empty when `stacks` holds no bytes.
std::string FlameGraphSvg(const std::vector<FlameStack>& stacks);

}  // namespace heapgraph::report
