#include "report/LeakReportHtml.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "reader/ByteSize.h"
#include "report/CallerSelector.h"
#include "report/CycleGraphSvg.h"
#include "report/ExplanationText.h"
#include "report/FoomReport.h"
#include "report/HtmlBarChart.h"
#include "report/HtmlEscape.h"
#include "report/HtmlPage.h"
#include "report/LeakReportText.h"
#include "report/SourceSnippet.h"

namespace heapgraph::report {
namespace {

std::string Bytes(uint64_t bytes) {
  return HtmlEscape(ByteSize::Readable(bytes));
}

bool IsSystemFrame(const ReportFrame& f) {
  return f.module_path.starts_with("/lib") || f.module_path.starts_with("/usr/lib") ||
         CallerSelector::IsAllocationPlumbing(f);
}

// A named frame: its label, then where it is ("(app+0x1136 build-id 3f2a...)", muted). An unnamed
// one: its label alone, which already is module+offset and build-id (FrameLabel).
std::string FrameItem(const ReportFrame& f, bool system) {
  std::string where;
  if (!f.function.empty()) {
    where = f.module.empty() ? fmt::format("{:#x}", f.address)
                             : fmt::format("{}+{:#x}", f.module, f.offset);
    if (!f.build_id.empty()) where += " build-id " + f.build_id;
    where = " <span class=\"muted\">(" + HtmlEscape(where) + ")</span>";
  }
  return fmt::format("<li{}>{}{}</li>\n", system ? " class=\"system\"" : "",
                     HtmlEscape(FrameLabel(f)), where);
}

// The page's pieces for one report; holds the helpers that keep state across groups.
class Page {
 public:
  Page(const LeakReport& report, const HtmlOptions& options)
      : report_(report), options_(options), sources_(options.source_dirs) {}

  std::string Render() {
    std::string body = "<h1>heapgraph leak report</h1>\n" + Summary();
    body += Groups() + Indirect() + Cycles() + Explanations() + Categories();
    return HtmlPage("heapgraph leak report", body);
  }

 private:
  std::string Summary() {
    const LeakSummary& s = report_.summary;
    std::string out;
    if (!report_.ok) {
      out +=
          "<p class=\"verdict warn\">The leak scan failed: " + HtmlEscape(report_.error) + "</p>\n";
    } else if (s.direct_blocks + s.indirect_blocks == 0) {
      out += "<p class=\"verdict\">No leaks found.</p>\n";
    } else {
      out += fmt::format(
          "<p class=\"verdict warn\">{} leaked in {} direct and {} indirect block(s); {} retain "
          "cycle(s).</p>\n",
          Bytes(s.leaked_bytes), s.direct_blocks, s.indirect_blocks, s.cycles);
    }
    out += "<table>\n";
    out += fmt::format("<tr><th>direct</th><td class=\"num\">{} blocks</td><td>{}</td></tr>\n",
                       s.direct_blocks, Bytes(s.direct_bytes));
    out += fmt::format("<tr><th>indirect</th><td class=\"num\">{} blocks</td><td>{}</td></tr>\n",
                       s.indirect_blocks, Bytes(s.indirect_bytes));
    out += fmt::format("<tr><th>live</th><td class=\"num\">{} blocks</td><td>{}</td></tr>\n",
                       s.live_blocks, Bytes(s.live_bytes));
    if (s.suppressed_blocks != 0) {
      out +=
          fmt::format("<tr><th>suppressed</th><td class=\"num\">{} blocks</td><td>{}</td></tr>\n",
                      s.suppressed_blocks, Bytes(s.suppressed_bytes));
    }
    out += "</table>\n";
    out += "<p class=\"muted\">Recording " + HtmlEscape(report_.recording_dir);
    if (!options_.json_report.empty()) {
      out += "; full report (every stack and block): " + HtmlEscape(options_.json_report);
    }
    out += ". Heap contents are never part of a report.</p>\n";
    if (!report_.notice.empty()) out += "<p>" + HtmlEscape(report_.notice) + "</p>\n";
    for (const std::string& w : report_.warnings) {
      out += "<p class=\"warn\">warning: " + HtmlEscape(w) + "</p>\n";
    }
    return out;
  }

  // The cycle a direct record represents, if any.
  std::optional<size_t> CycleOf(size_t record) const {
    for (size_t c = 0; c < report_.cycles.size(); ++c) {
      const LeakCycle& cycle = report_.cycles[c];
      if (cycle.representative && cycle.members[*cycle.representative].record == record) return c;
    }
    return std::nullopt;
  }

  std::string Source(const FrameList& stack, size_t from) {
    for (size_t i = from; i < stack.size(); ++i) {
      const ReportFrame& f = stack[i];
      std::vector<SourceLine> lines = sources_.Around(f.file, f.line, options_.source_context);
      if (lines.empty()) continue;
      std::string out = "<pre class=\"source\">" + HtmlEscape(f.file) + "\n";
      for (const SourceLine& l : lines) {
        std::string text = fmt::format("{:5} {}", l.number, HtmlEscape(l.text));
        out += l.number == f.line ? "<span class=\"hit\">" + text + "</span>\n" : text + "\n";
      }
      return out + "</pre>\n";
    }
    return "";
  }

  std::string Stack(const FrameList& stack, size_t caller1) {
    std::string app;
    size_t shown = 0;
    for (size_t i = caller1; i < stack.size(); ++i) {
      if (IsSystemFrame(stack[i])) continue;
      app += FrameItem(stack[i], false);
      ++shown;
    }
    std::string out;
    if (shown > 0) out += "<ol class=\"frames\">\n" + app + "</ol>\n";
    out += fmt::format(
        "<details><summary>whole stack ({} frames, system frames grey)</summary>"
        "<ol class=\"frames\" start=\"0\">\n",
        stack.size());
    for (const ReportFrame& f : stack) out += FrameItem(f, IsSystemFrame(f));
    return out + "</ol></details>\n";
  }

  std::string Group(size_t index, const LeakRecord& r, bool open) {
    std::vector<ReportFrame> frames = r.stack.ToVector();
    CallerSelector::Callers callers = selector_.Select(frames);
    size_t caller1 = callers.caller1 >= 0 ? static_cast<size_t>(callers.caller1) : 0;
    std::string site = caller1 < frames.size() ? FrameLabel(frames[caller1]) : "(no stack)";
    std::string text = r.type + " " + site;
    for (const ReportFrame& f : frames) text += " " + f.function + " " + f.file;
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string out = fmt::format(
        "<div class=\"group\" data-retained=\"{}\" data-size=\"{}\" data-count=\"{}\" "
        "data-text=\"{}\"><details{}><summary><b>{}</b> retained by {} direct block(s) of {} "
        "(<code>{}</code>) at <code>{}</code></summary>\n",
        r.retained_bytes, r.size, r.count, HtmlEscape(text), open ? " open" : "",
        Bytes(r.retained_bytes), r.count, Bytes(r.size), HtmlEscape(r.type), HtmlEscape(site));
    if (std::optional<size_t> cycle = CycleOf(index)) {
      out += fmt::format("<p>Represents <a href=\"#cycle-{}\">retain cycle {}</a>.</p>\n",
                         *cycle + 1, *cycle + 1);
    }
    out += Stack(r.stack, caller1) + Source(r.stack, caller1);
    out += "<p>Blocks: ";
    for (uint64_t address : r.examples) out += fmt::format("<code>{:#x}</code> ", address);
    if (r.count > r.examples.size())
      out += fmt::format("and {} more ", r.count - r.examples.size());
    out += r.block_size != 0 ? fmt::format("({} each)", Bytes(r.block_size)) : "(sizes vary)";
    out += "</p>\n" + Preview(r);
    return out + "</details></div>\n";
  }

  // The first bytes of the record's first block (option leak_preview), as hex and as text.
  static std::string Preview(const LeakRecord& r) {
    if (r.preview.empty() || r.examples.empty()) return "";
    std::string hex, text;
    for (size_t i = 0; i + 1 < r.preview.size(); i += 2) {
      unsigned byte = static_cast<unsigned>(std::stoul(r.preview.substr(i, 2), nullptr, 16));
      hex += r.preview.substr(i, 2) + (i + 2 < r.preview.size() ? " " : "");
      text += byte >= 0x20 && byte < 0x7f ? static_cast<char>(byte) : '.';
    }
    return fmt::format(
        "<p>First {} bytes of <code>{:#x}</code> (asked for: leak_preview): <code>{}</code> "
        "<code>|{}|</code></p>\n",
        r.preview.size() / 2, r.examples.front(), hex, HtmlEscape(text));
  }

  std::string Groups() {
    std::vector<size_t> direct;
    for (size_t i = 0; i < report_.leaks.size(); ++i) {
      const LeakRecord& r = report_.leaks[i];
      if (r.kind == LeakKind::kDirect && r.suppressed.empty()) direct.push_back(i);
    }
    if (direct.empty()) return "";
    std::stable_sort(direct.begin(), direct.end(), [&](size_t a, size_t b) {
      return report_.leaks[a].retained_bytes > report_.leaks[b].retained_bytes;
    });
    std::string out = fmt::format("<h2>Direct leaks ({} groups)</h2>\n", direct.size());
    out += GroupControls() + "<div id=\"groups\">\n";
    size_t shown = std::min(direct.size(), options_.max_groups);
    for (size_t k = 0; k < shown; ++k) {
      out += Group(direct[k], report_.leaks[direct[k]], k < 10);
    }
    out += "</div>\n";
    if (shown < direct.size()) {
      uint64_t bytes = 0;
      for (size_t k = shown; k < direct.size(); ++k) bytes += report_.leaks[direct[k]].size;
      out += fmt::format(
          "<p class=\"muted\">{} smaller groups ({}) are not on this page; the JSON "
          "report has them.</p>\n",
          direct.size() - shown, Bytes(bytes));
    }
    return out;
  }

  std::string Indirect() {
    std::string rows;
    size_t count = 0;
    for (const LeakRecord& r : report_.leaks) {
      if (r.kind != LeakKind::kIndirect || !r.suppressed.empty()) continue;
      if (++count > options_.max_groups) continue;
      std::vector<ReportFrame> frames = r.stack.ToVector();
      CallerSelector::Callers callers = selector_.Select(frames);
      std::string site =
          callers.caller1 >= 0 ? FrameLabel(frames[static_cast<size_t>(callers.caller1)]) : "";
      rows += fmt::format(
          "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td>"
          "<td><code>{}</code></td></tr>\n",
          Bytes(r.size), r.count, HtmlEscape(r.type), HtmlEscape(site));
    }
    if (count == 0) return "";
    return fmt::format(
        "<h2>Indirect leaks</h2>\n<details><summary>{} record(s) retained by the "
        "direct leaks above (fix those)</summary>\n<table><tr><th>bytes</th>"
        "<th>blocks</th><th>type</th><th>allocated at</th></tr>\n{}</table>"
        "</details>\n",
        count, rows);
  }

  std::string RootPath(const LeakCycle& c) {
    const CycleRoot& root = *c.root;
    std::string where = root.kind;
    if (root.kind == "stack" || root.kind == "registers" || root.kind == "tls") {
      where += fmt::format(" of thread {}", root.thread);
    }
    if (!root.module.empty()) where += " in " + root.module;
    if (root.address != 0) where += fmt::format(" at {:#x}", root.address);
    std::string out = "<p>Held by the " + HtmlEscape(where) + ":</p>\n<ol class=\"frames\">\n";
    for (const RetentionStep& s : root.path) {
      out += fmt::format("<li>{}<code>{}</code> ({}, {:#x})</li>\n",
                         s.field.empty() ? "" : "." + HtmlEscape(s.field) + " &rarr; ",
                         HtmlEscape(s.type), Bytes(s.size), s.address);
    }
    return out + "</ol>\n";
  }

  std::string Cycle(size_t index, const LeakCycle& c) {
    std::string out = fmt::format(
        "<div class=\"cycle\" id=\"cycle-{}\"><h3>{}. {} {}{} retain cycle of {} block(s), {}"
        "</h3>\n",
        index + 1, index + 1, c.leaked ? "Leaked" : "Reachable", HtmlEscape(c.kind),
        c.typed ? " (typed)" : "", c.members.size(), Bytes(c.retained_bytes));
    if (c.typed && !c.path.empty()) {
      out += "<p><code>" + HtmlEscape(FormatTypedPath(c)) + "</code></p>\n";
    }
    if (index < options_.max_cycles) {
      if (std::optional<std::string> svg = graphs_.Draw(c)) {
        out += *svg + "\n";
      } else {
        out += "<p class=\"muted\">(Graphviz could not draw this cycle.)</p>\n";
      }
    }
    if (!c.path.empty()) {
      const CycleMember& last = c.members[c.path.back()];
      const CycleMember& first = c.members[c.path.front()];
      out += fmt::format(
          "<p>Edge to break (red): <code>{}{}</code> &rarr; <code>{}</code>, the "
          "reference that closes the cycle.</p>\n",
          HtmlEscape(last.type), last.field.empty() ? "" : "." + HtmlEscape(last.field),
          HtmlEscape(first.type));
    }
    if (c.root) out += RootPath(c);
    return out + "</div>\n";
  }

  std::string Cycles() {
    if (report_.cycles.empty()) return "";
    std::string out = fmt::format("<h2>Retain cycles ({})</h2>\n", report_.cycles.size());
    for (size_t i = 0; i < report_.cycles.size(); ++i) out += Cycle(i, report_.cycles[i]);
    if (report_.cycles.size() > options_.max_cycles) {
      out += fmt::format(
          "<p class=\"muted\">Cycles after the first {} are listed without a "
          "picture.</p>\n",
          options_.max_cycles);
    }
    return out;
  }

  std::string Categories() {
    if (report_.categories.empty()) return "";
    std::vector<BarRow> rows;
    for (size_t i = 0; i < report_.categories.size() && i < options_.max_categories; ++i) {
      const CategoryRow& c = report_.categories[i];
      rows.push_back(
          {.label = c.type,
           .value = c.live_bytes,
           .value_text = fmt::format(
               "{} live in {} blocks{}", ByteSize::Readable(c.live_bytes), c.live_count,
               c.leaked_count != 0 ? fmt::format(", {} leaked", ByteSize::Readable(c.leaked_bytes))
                                   : ""),
           .marked = c.leaked_count != 0});
    }
    return "<h2>Categories (live bytes; red: with leaked blocks)</h2>\n" + HtmlBarChart(rows);
  }

  // Why the explain targets are reachable (`--explain`), as the text report words it: root, then
  // each block of the chain.
  std::string Explanations() {
    if (report_.explanations.empty()) return "";
    return "<h2 id=\"explain\">Why reachable</h2>\n<pre class=\"explain\">" +
           HtmlEscape(FormatExplanations(report_.explanations)) + "</pre>\n";
  }

  const LeakReport& report_;
  const HtmlOptions& options_;
  SourceSnippet sources_;
  CallerSelector selector_;
  CycleGraphSvg graphs_;
};

}  // namespace

std::string LeakReportHtml(const LeakReport& report, const HtmlOptions& options) {
  return Page(report, options).Render();
}

}  // namespace heapgraph::report
