#include "report/FlameGraphSvg.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "reader/ByteSize.h"
#include "report/HtmlEscape.h"

namespace heapgraph::report {
namespace {

constexpr double kWidth = 1100;     // px of the whole graph
constexpr int kRow = 18;            // px of one frame's row
constexpr double kCharWidth = 6.6;  // px of one character at the labels' font size

// A prefix tree of the stacks: one node per distinct frame path from the bottom.
struct Node {
  uint64_t bytes = 0;
  bool marked = false;
  std::map<std::string, std::unique_ptr<Node>> callees;
};

size_t Depth(const Node& node) {
  size_t depth = 0;
  for (const auto& [label, callee] : node.callees) depth = std::max(depth, 1 + Depth(*callee));
  return depth;
}

struct Layout {
  std::string svg;
  double scale = 0;  // px per byte
  int height = 0;    // px of the whole graph
};

// The label cut to what fits in `width` px, with an ellipsis; empty when not even 3 characters do.
std::string Fitted(const std::string& label, double width) {
  size_t fits = static_cast<size_t>(std::max(0.0, (width - 6) / kCharWidth));
  if (fits < 3) return "";
  if (label.size() <= fits) return label;
  return label.substr(0, fits - 2) + "..";
}

void Draw(Layout& layout, const std::string& label, const Node& node, double x, size_t level) {
  double width = static_cast<double>(node.bytes) * layout.scale;
  if (width < 1 || level >= kFlameMaxDepth) return;
  int y = layout.height - static_cast<int>(level + 1) * kRow;
  std::string text = Fitted(label, width);
  layout.svg += fmt::format(
      "<g><title>{} ({})</title><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
      "rx=\"2\" fill=\"{}\" stroke=\"#fff\"/>",
      HtmlEscape(label), HtmlEscape(ByteSize::Readable(node.bytes)), x, y, width, kRow - 1,
      node.marked ? "#e0785f" : "#f2b45c");
  if (!text.empty()) {
    layout.svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>", x + 3, y + kRow - 5, HtmlEscape(text));
  }
  layout.svg += "</g>\n";
  double callee_x = x;
  for (const auto& [callee_label, callee] : node.callees) {
    Draw(layout, callee_label, *callee, callee_x, level + 1);
    callee_x += static_cast<double>(callee->bytes) * layout.scale;
  }
}

}  // namespace

std::string FlameGraphSvg(const std::vector<FlameStack>& stacks) {
  Node root;
  for (const FlameStack& s : stacks) {
    Node* node = &root;
    node->bytes += s.bytes;
    for (const std::string& frame : s.frames) {
      std::unique_ptr<Node>& callee = node->callees[frame];
      if (!callee) callee = std::make_unique<Node>();
      node = callee.get();
      node->bytes += s.bytes;
      node->marked = node->marked || s.marked;
    }
  }
  if (root.bytes == 0) return "";
  Layout layout;
  layout.scale = kWidth / static_cast<double>(root.bytes);
  layout.height = static_cast<int>(std::min(Depth(root), kFlameMaxDepth)) * kRow;
  layout.svg = fmt::format(
      "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{}\" "
      "font-family=\"monospace\" font-size=\"11\">\n",
      kWidth, layout.height);
  double x = 0;
  for (const auto& [label, callee] : root.callees) {
    Draw(layout, label, *callee, x, 0);
    x += static_cast<double>(callee->bytes) * layout.scale;
  }
  return layout.svg + "</svg>\n";
}

}  // namespace heapgraph::report
