// report/: one retain cycle drawn as an SVG picture for the HTML leak page, laid out by Graphviz's
// C library (libgvc: agmemread, gvLayout "dot", gvRenderData "svg"): nodes are the cycle's blocks
// (type name, size, address), edges follow the cycle's path labelled with the owning field, the
// closing edge (back into the cycle's first member, the reference to break) drawn red and bold. A
// member off the path is drawn without edges (the report does not keep its references). Every
// label is escaped for DOT (quotes, backslashes: no \N or \G expansions) and Graphviz writes it
// XML-escaped; the returned markup starts at "<svg" (no prolog, no DOCTYPE) for inlining. All
// instances share one process-wide Graphviz context, used under one lock. Graphviz is loaded by the
// first Draw (heapgraph does not link it); without it Draw returns nullopt.
#pragma once

#include <optional>
#include <string>

#include "report/LeakReport.h"

namespace heapgraph::report {

class CycleGraphSvg {
 public:
  CycleGraphSvg();
  ~CycleGraphSvg();
  CycleGraphSvg(const CycleGraphSvg&) = delete;
  CycleGraphSvg& operator=(const CycleGraphSvg&) = delete;

  // The cycle's picture; nullopt when Graphviz cannot be loaded, lay it out or render SVG
  // (no plugin).
  std::optional<std::string> Draw(const LeakCycle& cycle);

  // The DOT text of the cycle's graph (exposed for tests).
  static std::string Dot(const LeakCycle& cycle);
};

}  // namespace heapgraph::report
