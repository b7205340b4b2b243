// LeakReportHtml, FoomReportHtml and their pieces (HtmlEscape, CycleGraphSvg, SourceSnippet,
// HtmlBarChart, PressureChartSvg): self-contained pages, cycles drawn by Graphviz with the member
// type names, hostile names escaped everywhere, source lines when the file is on disk.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "report/CycleGraphSvg.h"
#include "report/FoomReportHtml.h"
#include "report/HtmlEscape.h"
#include "report/LeakReportHtml.h"
#include "report/SourceSnippet.h"
#include "tests/FileText.h"
#include "tests/TempDir.h"
#include "tests/report/ExplanationSamples.h"
#include "tests/report/ReportSamples.h"

// Graphviz keeps process-wide caches it never frees: libgvc's text-size estimates
// (textspan_size), its pango plugin's font map and fontconfig's configuration. LeakSanitizer
// reports them at exit in the sanitizer build; they are Graphviz's, not heapgraph's (CycleGraphSvg
// frees its context, layout, graph and rendered data).
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgvc.so\nleak:libgvplugin_pango.so\nleak:libfontconfig.so\n";
}

namespace heapgraph::report {
namespace {

// Nothing that would load from the network or run script from a report's strings.
void ExpectSelfContainedAndEscaped(const std::string& page) {
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(CountOf(page, "<script"), 1u);  // the page's own
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find('\x01'), std::string::npos);
}

TEST(LeakReportHtmlTest, EscapesMarkupAndBadBytes) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("ok\x01\xff\xc3\xa9"), "ok\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9");
}

TEST(LeakReportHtmlTest, CycleIsDrawnWithTypeNames) {
  CycleGraphSvg graphs;
  for (bool hostile : {false, true}) {
    LeakReport report = samples::SampleLeakReport(hostile);
    std::optional<std::string> svg = graphs.Draw(report.cycles[0]);
    ASSERT_TRUE(svg.has_value()) << CycleGraphSvg::Dot(report.cycles[0]);
    EXPECT_EQ(svg->rfind("<svg", 0), 0u);
    EXPECT_NE(svg->find("ChatSession"), std::string::npos) << *svg;
    EXPECT_NE(svg->find("_onMessage"), std::string::npos);
    EXPECT_NE(svg->find("#c0392b"), std::string::npos);  // the edge to break
    EXPECT_EQ(svg->find("<script"), std::string::npos) << *svg;
  }
}

TEST(LeakReportHtmlTest, LeakPageShowsGroupsCyclesAndCategories) {
  for (bool hostile : {false, true}) {
    std::string page = LeakReportHtml(samples::SampleLeakReport(hostile));
    ExpectSelfContainedAndEscaped(page);
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(CountOf(page, "class=\"group\""), 1u);  // one direct record
    EXPECT_NE(page.find("id=\"groups\""), std::string::npos);
    EXPECT_EQ(CountOf(page, "<svg"), 2u);  // both cycles drawn
    EXPECT_NE(page.find("Reachable shared_ptr"), std::string::npos);
    EXPECT_NE(page.find("Held by the global in /usr/bin/app"), std::string::npos);
    EXPECT_NE(page.find("Edge to break"), std::string::npos);
    EXPECT_NE(page.find("Categories"), std::string::npos);
    if (hostile) {
      EXPECT_NE(page.find("&lt;script&gt;alert"), std::string::npos);
    }
  }
}

// A frame the recording could not name: module+offset and the build-id whose debug file would
// name it, once (not repeated as the muted "where" of named frames).
TEST(LeakReportHtmlTest, AnUnnamedFrameShowsModuleOffsetAndBuildId) {
  LeakReport report = samples::SampleLeakReport();
  ReportFrame unnamed = report.leaks[0].stack[1];
  unnamed.function.clear();
  unnamed.file.clear();
  unnamed.line = 0;
  report.leaks[0].stack.replace(1, unnamed);
  std::string page = LeakReportHtml(report);
  std::string label = HtmlEscape("app+0x1000 (build-id 0123abcd)");
  EXPECT_NE(page.find("<li>" + label + "</li>"), std::string::npos) << page;
  EXPECT_EQ(FrameLabel(unnamed), "app+0x1000 (build-id 0123abcd)");
  unnamed.build_id.clear();
  EXPECT_EQ(FrameLabel(unnamed), "app+0x1000");
}

TEST(LeakReportHtmlTest, SourceLinesWhenTheFileIsOnDisk) {
  TempDir dir;
  std::ofstream(dir.path() + "/chat.cc") << "line 1\nline 2\n<b>line 3</b>\nline 4\n";
  SourceSnippet sources({dir.path()});
  std::vector<SourceLine> lines = sources.Around("../../chat.cc", 3, 1);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].number, 3);
  EXPECT_EQ(lines[1].text, "<b>line 3</b>");
  EXPECT_TRUE(sources.Around("../../chat.cc", 9, 1).empty());
  EXPECT_TRUE(sources.Around("missing.cc", 1, 1).empty());

  LeakReport report = samples::SampleLeakReport();
  report.leaks[0].stack.replace(
      1, samples::Frame(0x555500001000, "ChatSession::start()", "src/chat.cc", 3));
  HtmlOptions options;
  options.source_dirs = {dir.path()};
  std::string page = LeakReportHtml(report, options);
  EXPECT_NE(page.find("<span class=\"hit\">    3 &lt;b&gt;line 3&lt;/b&gt;</span>"),
            std::string::npos)
      << page;
}

TEST(LeakReportHtmlTest, ExplanationsAreShownAsTheTextWordsThem) {
  LeakReport report = samples::SampleLeakReport();
  EXPECT_EQ(LeakReportHtml(report).find("Why reachable"), std::string::npos);
  ExplainRoot global;
  global.kind = "global";
  global.address = 0x5010;
  global.module = "/usr/bin/app";
  global.symbol = "g_<cache>";
  report.explanations.push_back(samples::Reachable("0x2010", false, global));
  std::string page = LeakReportHtml(report);
  ExpectSelfContainedAndEscaped(page);
  EXPECT_NE(page.find("<h2 id=\"explain\">Why reachable</h2>"), std::string::npos);
  EXPECT_NE(page.find("reachable from global g_&lt;cache&gt;+0x0 of app"), std::string::npos)
      << page;
  EXPECT_NE(page.find("at +0x10 points to"), std::string::npos);
}

TEST(LeakReportHtmlTest, PreviewOnlyWhenTheReportHasOneAndEscaped) {
  LeakReport report = samples::SampleLeakReport();
  EXPECT_EQ(LeakReportHtml(report).find("First "), std::string::npos) << "never by default";
  size_t direct = 0;
  while (report.leaks[direct].kind != LeakKind::kDirect) ++direct;
  report.leaks[direct].preview = "3c7363726970743e00";  // "<script>\0"
  std::string page = LeakReportHtml(report);
  ExpectSelfContainedAndEscaped(page);
  EXPECT_NE(page.find("<code>3c 73 63 72 69 70 74 3e 00</code> <code>|&lt;script&gt;.|</code>"),
            std::string::npos)
      << page;
}

TEST(LeakReportHtmlTest, FoomPageShowsExitSuspectTimelineAndCategories) {
  for (bool hostile : {false, true}) {
    std::string page = FoomReportHtml(samples::SampleFoomReport(hostile));
    ExpectSelfContainedAndEscaped(page);
    EXPECT_NE(page.find("oom_kill: the cgroup"), std::string::npos);
    EXPECT_NE(page.find("Caller1"), std::string::npos);
    EXPECT_NE(page.find("Memory pressure time line"), std::string::npos);
    EXPECT_EQ(CountOf(page, "<polyline"), 2u);         // RSS and heap
    EXPECT_EQ(CountOf(page, "stroke-dasharray"), 2u);  // two watermarks
    EXPECT_NE(page.find("(suspect)"), std::string::npos);
  }
}

TEST(LeakReportHtmlTest, LargeReportsAreFolded) {
  LeakReport report = samples::SampleLeakReport();
  for (int i = 0; i < 50; ++i) report.leaks.push_back(report.leaks[0]);
  HtmlOptions options;
  options.max_groups = 10;
  std::string page = LeakReportHtml(report, options);
  EXPECT_EQ(CountOf(page, "class=\"group\""), 10u);
  EXPECT_NE(page.find("41 smaller groups"), std::string::npos);
}

}  // namespace
}  // namespace heapgraph::report
