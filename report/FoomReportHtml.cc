#include "report/FoomReportHtml.h"

#include <fmt/format.h>
#include <string.h>

#include <algorithm>

#include "reader/ByteSize.h"
#include "report/CallerSelector.h"
#include "report/FlameGraphSvg.h"
#include "report/HtmlBarChart.h"
#include "report/HtmlEscape.h"

namespace heapgraph::report {
namespace {

std::string Bytes(uint64_t bytes) {
  return HtmlEscape(ByteSize::Readable(bytes));
}

std::string Row(const char* name, const std::string& escaped_value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, escaped_value);
}

std::string ExitTable(const FoomReport& r) {
  const ExitRecord& e = r.exit;
  std::string out = fmt::format("<p class=\"verdict warn\">{}: {}</p>\n<table>\n",
                                HtmlEscape(e.kind), HtmlEscape(e.reason));
  out += Row("classified", HtmlEscape(e.source));
  if (r.session) {
    out += Row("process",
               fmt::format("pid {}, {}", r.session->pid, HtmlEscape(r.session->executable)));
  }
  if (e.signal != 0) {
    const char* abbrev = sigabbrev_np(static_cast<int>(e.signal));
    out += Row("signal", fmt::format("SIG{} (code {}, address {:#x})",
                                     HtmlEscape(abbrev != nullptr ? abbrev : "?"), e.signal_code,
                                     e.signal_address));
  }
  if (e.exit_status_known) out += Row("exit status", fmt::format("{}", e.exit_status));
  if (e.oom_kills_before != format::kUnknownCounter || e.oom_kills_now != format::kUnknownCounter) {
    out += Row("cgroup oom_kill",
               fmt::format("{} at start, {} now", e.oom_kills_before, e.oom_kills_now));
  }
  if (e.kind == "hang") out += Row("no progress for", fmt::format("{} ms", e.stall_ms));
  out += Row("live at the end", fmt::format("{} blocks, {}", r.live.count, Bytes(r.live.bytes)));
  if (r.sample_mean != 0) {
    out += Row("sampled", fmt::format("estimates from {} sampled blocks (sample mean {})",
                                      r.live.sampled, Bytes(r.sample_mean)));
  }
  return out + "</table>\n";
}

std::string Feature(const FoomReport& r) {
  if (!r.feature) return "";
  const FeatureValue& f = *r.feature;
  return "<h2>Suspect</h2>\n<table>\n" +
         Row("Caller1", "<code>" + HtmlEscape(f.caller1.empty() ? "?" : f.caller1) + "</code>") +
         Row("Caller2", "<code>" + HtmlEscape(f.caller2.empty() ? "?" : f.caller2) + "</code>") +
         Row("Category", HtmlEscape(f.category)) + Row("Reason", HtmlEscape(f.reason)) +
         "</table>\n";
}

std::string Frames(const std::vector<ReportFrame>& frames) {
  std::string app, all;
  for (const ReportFrame& f : frames) {
    bool system = f.module_path.starts_with("/lib") || f.module_path.starts_with("/usr/lib") ||
                  CallerSelector::IsAllocationPlumbing(f);
    std::string item = fmt::format("<li{}>{}</li>\n", system ? " class=\"system\"" : "",
                                   HtmlEscape(FrameLabel(f)));
    if (!system) app += item;
    all += item;
  }
  std::string out = app.empty() ? "" : "<ol class=\"frames\">\n" + app + "</ol>\n";
  return out + fmt::format(
                   "<details><summary>whole stack ({} frames)</summary><ol "
                   "class=\"frames\" start=\"0\">\n{}</ol></details>\n",
                   frames.size(), all);
}

// A flame graph frame's name: the function without its source line (so that the calls from one
// function share a box), else module+offset. Allocation plumbing is left out.
std::string FlameFrame(const ReportFrame& f) {
  if (!f.function.empty()) return f.function;
  return FrameLabel(f);
}

// The stacks the page lists (the top stacks of its categories), outermost frame first, each
// topped by its category's name.
std::string TopStacksFlameGraph(const FoomReport& r, const HtmlOptions& options) {
  std::vector<FlameStack> stacks;
  for (size_t i = 0; i < r.categories.size() && i < options.max_categories; ++i) {
    const FoomCategory& c = r.categories[i];
    for (size_t k = 0; k < c.stacks.size() && k < options.max_stacks; ++k) {
      FlameStack flame;
      flame.bytes = c.stacks[k].bytes;
      flame.marked = !c.suspect_reasons.empty();
      const std::vector<ReportFrame>& frames = c.stacks[k].frames;
      for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
        if (!CallerSelector::IsAllocationPlumbing(*f)) flame.frames.push_back(FlameFrame(*f));
      }
      flame.frames.push_back(c.name);
      stacks.push_back(std::move(flame));
    }
  }
  return FlameGraphSvg(stacks);
}

std::string Categories(const FoomReport& r, const HtmlOptions& options) {
  if (r.categories.empty()) return "";
  std::vector<BarRow> rows;
  for (size_t i = 0; i < r.categories.size() && i < options.max_categories; ++i) {
    const FoomCategory& c = r.categories[i];
    rows.push_back({.label = c.name,
                    .value = c.bytes,
                    .value_text = fmt::format("{} in {} blocks, {} stacks{}",
                                              ByteSize::Readable(c.bytes), c.count, c.stack_count,
                                              c.suspect_reasons.empty() ? "" : " (suspect)"),
                    .marked = !c.suspect_reasons.empty()});
  }
  std::string out = "<h2>Categories (bytes; red: suspect)</h2>\n" + HtmlBarChart(rows);
  std::string flame = TopStacksFlameGraph(r, options);
  if (!flame.empty()) {
    out +=
        "<h2>Top stacks as a flame graph</h2>\n<p class=\"muted\">Callers at the bottom, the "
        "category on top; width: bytes; red: a suspect category. Hover a box for its name "
        "and bytes.</p>\n" +
        flame;
  }
  out += "<h2>Top stacks</h2>\n";
  for (size_t i = 0; i < r.categories.size() && i < options.max_categories; ++i) {
    const FoomCategory& c = r.categories[i];
    if (c.stacks.empty()) continue;
    out += fmt::format("<h3>{}</h3>\n", HtmlEscape(c.name));
    for (const std::string& reason : c.suspect_reasons) {
      out += "<p class=\"warn\">suspect: " + HtmlEscape(reason) + "</p>\n";
    }
    size_t shown = std::min(c.stacks.size(), options.max_stacks);
    for (size_t k = 0; k < shown; ++k) {
      const FoomStack& s = c.stacks[k];
      out += fmt::format("<div class=\"group\"><p>stack {}: {} blocks, {}</p>\n", s.stack_id,
                         s.count, Bytes(s.bytes));
      out += Frames(s.frames) + "</div>\n";
    }
    if (shown < c.stacks.size()) {
      out += fmt::format("<p class=\"muted\">{} more stacks in the JSON report.</p>\n",
                         c.stacks.size() - shown);
    }
  }
  return out;
}

}  // namespace

std::string PressureChartSvg(const PressureTimeline& timeline) {
  const std::vector<PressureEntry>& entries = timeline.entries();
  if (entries.empty()) return "";
  constexpr double kWidth = 640, kHeight = 240, kLeft = 70, kBottom = 30, kTop = 10, kRight = 10;
  uint64_t max_ns = 1, max_bytes = 1;
  for (const PressureEntry& e : entries) {
    max_ns = std::max(max_ns, e.record.elapsed_ns);
    max_bytes = std::max({max_bytes, e.record.rss, e.record.heap_bytes, e.record.limit});
  }
  auto x = [&](uint64_t ns) {
    return kLeft +
           (kWidth - kLeft - kRight) * static_cast<double>(ns) / static_cast<double>(max_ns);
  };
  auto y = [&](uint64_t bytes) {
    return kTop + (kHeight - kTop - kBottom) *
                      (1 - static_cast<double>(bytes) / static_cast<double>(max_bytes));
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, kHeight, kWidth, kHeight);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", kLeft,
                     kTop, kHeight - kBottom);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>\n", kLeft,
                     kHeight - kBottom, kWidth - kRight);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 4, kTop + 8,
                     Bytes(max_bytes));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.2f} s</text>\n",
                     kWidth - kRight, kHeight - 8, static_cast<double>(max_ns) / 1e9);
  // The watermarks, as levels of the last entry's limit.
  uint64_t limit = entries.back().record.limit;
  const format::PressureHeader& h = timeline.header();
  for (uint32_t i = 0; i < h.watermark_count && i < format::kMaxWatermarks && limit != 0; ++i) {
    double level = y(limit / 100 * h.watermarks[i]);
    svg += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#d9534f\" "
        "stroke-dasharray=\"4 3\"/><text x=\"{}\" y=\"{:.1f}\" fill=\"#d9534f\">{}%</text>\n",
        kLeft, level, kWidth - kRight, level, kLeft + 2, level - 2, h.watermarks[i]);
  }
  for (auto [name, color, heap] :
       {std::tuple{"RSS", "#2c6fbb", false}, std::tuple{"heap", "#5cb85c", true}}) {
    std::string points;
    for (const PressureEntry& e : entries) {
      points += fmt::format("{:.1f},{:.1f} ", x(e.record.elapsed_ns),
                            y(heap ? e.record.heap_bytes : e.record.rss));
    }
    svg += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title>"
        "</polyline>\n",
        color, points, name);
    for (const PressureEntry& e : entries) {
      uint64_t bytes = heap ? e.record.heap_bytes : e.record.rss;
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} {} at +{:.2f} s "
          "({}% watermark)</title></circle>\n",
          x(e.record.elapsed_ns), y(bytes), color, name, Bytes(bytes),
          static_cast<double>(e.record.elapsed_ns) / 1e9, e.record.watermark);
    }
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" fill=\"#2c6fbb\">RSS</text><text x=\"{}\" y=\"{}\" "
      "fill=\"#5cb85c\">heap</text>\n",
      kLeft + 40, kTop + 10, kLeft + 80, kTop + 10);
  return svg + "</svg>\n";
}

std::string FoomReportHtml(const FoomReport& r, const HtmlOptions& options) {
  std::string body = "<h1>heapgraph FOOM report</h1>\n<p class=\"muted\">Recording " +
                     HtmlEscape(r.directory) + "</p>\n" + ExitTable(r) + Feature(r);
  if (r.crash_lag) {
    body += fmt::format(
        "<h2>Lag in progress at death</h2>\n<p>Thread {}: {} of {} samples in the "
        "most time-consuming stack.</p>\n",
        r.crash_lag->tid, r.crash_lag->repeats, r.crash_lag->samples);
    body += Frames(r.crash_lag->stack.frames);
  }
  if (r.pressure && !r.pressure->entries().empty()) {
    body += "<h2>Memory pressure time line</h2>\n" + PressureChartSvg(*r.pressure);
  }
  body += Categories(r, options);
  for (const std::string& w : r.warnings) {
    body += "<p class=\"warn\">warning: " + HtmlEscape(w) + "</p>\n";
  }
  return HtmlPage("heapgraph FOOM report", body);
}

}  // namespace heapgraph::report
