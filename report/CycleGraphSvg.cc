#include "report/CycleGraphSvg.h"

#include <fmt/format.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <mutex>

#include "heap/platform/SharedLibrary.h"
#include "reader/ByteSize.h"

namespace heapgraph::report {
namespace {

// `text` as the inside of a DOT double-quoted string: quotes and backslashes escaped (so that no
// Graphviz escape such as \N applies), line breaks and other control bytes as spaces.
std::string DotString(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Long C++ type names cut to fit a node.
std::string Shortened(const std::string& type) {
  constexpr size_t kMax = 60;
  if (type.size() <= kMax) return type.empty() ? "?" : type;
  return type.substr(0, kMax - 3) + "...";
}

// Graphviz's functions, from libgvc loaded on the first picture (heap/platform/SharedLibrary: not
// every `heapgraph` command draws, and loading Graphviz at start cost each of them); all null
// when it cannot be loaded.
struct Graphviz {
  decltype(&gvContext) context = nullptr;
  decltype(&agmemread) read = nullptr;
  decltype(&gvLayout) layout = nullptr;
  decltype(&gvRenderData) render = nullptr;
  decltype(&gvFreeRenderData) free_render = nullptr;
  decltype(&gvFreeLayout) free_layout = nullptr;
  decltype(&agclose) close = nullptr;
  // One context for the process, never freed, every use under g_graphviz (Graphviz is not
  // thread-safe). A second context after freeing the first is a use after free in Graphviz
  // itself: its pango plugin keeps a pointer to the freed context's last font name (found by the
  // ASan+UBSan pass, LeakReportHtmlTest).
  GVC_t* gvc = nullptr;
};

Graphviz Load() {
  Graphviz g;
  const SharedLibrary library(HEAPGRAPH_GVC_SONAME);
  bool all = library.Bind("agmemread", &g.read) && library.Bind("gvLayout", &g.layout) &&
             library.Bind("gvRenderData", &g.render) &&
             library.Bind("gvFreeRenderData", &g.free_render) &&
             library.Bind("gvFreeLayout", &g.free_layout) && library.Bind("agclose", &g.close) &&
             library.Bind("gvContext", &g.context);
  if (all) g.gvc = g.context();
  return g;
}

const Graphviz& ProcessGraphviz() {
  static const Graphviz graphviz = Load();
  return graphviz;
}

std::mutex g_graphviz;

}  // namespace

CycleGraphSvg::CycleGraphSvg() = default;
CycleGraphSvg::~CycleGraphSvg() = default;

std::string CycleGraphSvg::Dot(const LeakCycle& cycle) {
  std::string dot =
      "digraph cycle {\n  graph [rankdir=LR, bgcolor=\"transparent\"];\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", "
      "fontname=\"sans-serif\", "
      "fontsize=11];\n  edge [fontname=\"sans-serif\", fontsize=10];\n";
  for (size_t i = 0; i < cycle.members.size(); ++i) {
    const CycleMember& m = cycle.members[i];
    dot += fmt::format("  m{} [label=\"{}\\n{} at {:#x}\"];\n", i, DotString(Shortened(m.type)),
                       ByteSize::Readable(m.size), m.address);
  }
  for (size_t k = 0; k < cycle.path.size(); ++k) {
    size_t from = cycle.path[k];
    size_t to = cycle.path[(k + 1) % cycle.path.size()];
    const std::string& field = cycle.members[from].field;
    bool closing = k + 1 == cycle.path.size();
    dot += fmt::format("  m{} -> m{} [label=\"{}\"{}];\n", from, to,
                       DotString(field.empty() ? "ref" : field),
                       closing ? ", color=\"#c0392b\", fontcolor=\"#c0392b\", penwidth=2.5" : "");
  }
  return dot + "}\n";
}

std::optional<std::string> CycleGraphSvg::Draw(const LeakCycle& cycle) {
  std::lock_guard<std::mutex> lock(g_graphviz);
  const Graphviz& gv = ProcessGraphviz();
  if (gv.gvc == nullptr) return std::nullopt;
  std::string dot = Dot(cycle);
  Agraph_t* graph = gv.read(dot.c_str());
  if (graph == nullptr) return std::nullopt;
  std::optional<std::string> svg;
  if (gv.layout(gv.gvc, graph, "dot") == 0) {
    char* data = nullptr;
    unsigned int length = 0;
    if (gv.render(gv.gvc, graph, "svg", &data, &length) == 0 && data != nullptr) {
      std::string text(data, length);
      size_t start = text.find("<svg");
      if (start != std::string::npos) svg = text.substr(start);
    }
    if (data != nullptr) gv.free_render(data);
    gv.free_layout(gv.gvc, graph);
  }
  gv.close(graph);
  return svg;
}

}  // namespace heapgraph::report
