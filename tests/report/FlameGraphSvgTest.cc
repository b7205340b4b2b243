// FlameGraphSvg: shared callers are one box as wide as all their stacks' bytes, callees stacked
// above them, boxes under a pixel left out, labels escaped, nothing drawn without bytes.
#include <gtest/gtest.h>

#include <string>

#include "report/FlameGraphSvg.h"
#include "tests/FileText.h"

namespace heapgraph::report {
namespace {

// The width attribute of the box whose <title> starts with `label`.
double WidthOf(const std::string& svg, const std::string& label) {
  size_t at = svg.find("<title>" + label + " (");
  EXPECT_NE(at, std::string::npos) << label;
  size_t width = svg.find("width=\"", at);
  return std::stod(svg.substr(width + 7));
}

TEST(FlameGraphSvgTest, SharedCallersAreOneBoxAsWideAsTheirStacks) {
  std::string svg =
      FlameGraphSvg({{.frames = {"main", "Grow", "Ledger"}, .bytes = 3000, .marked = false},
                     {.frames = {"main", "Grow", "Index"}, .bytes = 1000, .marked = false},
                     {.frames = {"main", "Load"}, .bytes = 4000, .marked = true}});
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(CountOf(svg, "<title>main ("), 1u);
  EXPECT_EQ(CountOf(svg, "<title>Grow ("), 1u);
  EXPECT_DOUBLE_EQ(WidthOf(svg, "main"), 1100.0);
  EXPECT_DOUBLE_EQ(WidthOf(svg, "Grow"), 550.0);
  EXPECT_DOUBLE_EQ(WidthOf(svg, "Ledger"), 412.5);
  EXPECT_DOUBLE_EQ(WidthOf(svg, "Load"), 550.0);
  EXPECT_NE(svg.find("height=\"54\""), std::string::npos) << "three rows of 18 px";
  EXPECT_EQ(CountOf(svg, "#e0785f"), 2u) << "main and Load carry the suspect's bytes";
}

TEST(FlameGraphSvgTest, BoxesUnderAPixelAreLeftOutButCountInTheirCallers) {
  std::string svg = FlameGraphSvg({{.frames = {"main", "Big"}, .bytes = 1000000, .marked = false},
                                   {.frames = {"main", "Tiny"}, .bytes = 1, .marked = false}});
  EXPECT_EQ(svg.find("Tiny"), std::string::npos);
  EXPECT_NE(svg.find("<title>main (976.56 KiB)"), std::string::npos) << svg;
}

TEST(FlameGraphSvgTest, LabelsAreEscapedAndNothingIsDrawnWithoutBytes) {
  std::string svg = FlameGraphSvg(
      {{.frames = {"<script>alert(1)</script>", "a&b"}, .bytes = 10, .marked = false}});
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a&amp;b"), std::string::npos);
  EXPECT_EQ(FlameGraphSvg({}), "");
  EXPECT_EQ(FlameGraphSvg({{.frames = {"main"}, .bytes = 0, .marked = false}}), "");
}

}  // namespace
}  // namespace heapgraph::report
