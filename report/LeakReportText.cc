#include "report/LeakReportText.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "report/BaseName.h"
#include "report/CallerSelector.h"
#include "report/ExplanationText.h"

namespace heapgraph::report {
namespace {

// A frame's line after its number: " 0x7f0012345678 in f() /src/a.cc:12 (libfoo.so+0x1234)\n";
// the module part is always kept when a module is known, the function and position only when
// symbolized; an unnamed frame adds its module's build-id (" (build-id 3f2a...)"), which says
// which debug file names it.
std::string FrameLineTail(const ReportFrame& frame) {
  std::string out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, " {:#x}", frame.address);
  if (!frame.function.empty()) out.append(" in ").append(frame.function);
  if (!frame.file.empty()) fmt::format_to(to, " {}:{}", frame.file, frame.line);
  if (frame.module.empty()) {
    out += " (<unknown module>)";
  } else {
    fmt::format_to(to, " ({}+{:#x})", frame.module, frame.offset);
    if (frame.function.empty() && !frame.build_id.empty()) {
      fmt::format_to(to, " (build-id {})", frame.build_id);
    }
  }
  return out + "\n";
}

// Each distinct frame's FrameLineTail, formatted once: records share their frames (FrameList), so
// a report of 2M leaks over 4,000 stacks has tens of thousands of frame lines but far fewer
// distinct frames. Keyed by the frame's address, valid while the report is.
class FrameLines {
 public:
  const std::string& Tail(const ReportFrame& frame) {
    auto [it, inserted] = tails_.try_emplace(&frame);
    if (inserted) it->second = FrameLineTail(frame);
    return it->second;
  }
  // Appends "    #3" and the frame's tail.
  void Append(std::string& out, size_t number, const ReportFrame& frame) {
    fmt::format_to(std::back_inserter(out), "    #{}", number);
    out += Tail(frame);
  }

 private:
  std::unordered_map<const ReportFrame*, std::string> tails_;
};

std::string RecordHeader(const LeakRecord& record) {
  std::string kind = record.kind == LeakKind::kDirect ? "Direct" : "Indirect";
  std::string retains;
  if (record.kind == LeakKind::kDirect) {
    retains = fmt::format(" (retains {} bytes)", record.retained_bytes);
  }
  return fmt::format("{} leak of {} byte(s) in {} object(s){} allocated from:\n", kind, record.size,
                     record.count, retains);
}

// "    type: Malloc 48 B; blocks: 0x10, 0x20, ... (5 in all)"
std::string TypeLine(const LeakRecord& record) {
  std::string line = "    type: " + record.type + "; blocks:";
  for (size_t i = 0; i < record.examples.size(); ++i) {
    line += fmt::format("{} {:#x}", i == 0 ? "" : ",", record.examples[i]);
  }
  if (record.count > record.examples.size()) line += fmt::format(", ... ({} in all)", record.count);
  return line + "\n";
}

// "f() a.cc:12", else the function, else module+offset.
std::string FrameSite(const ReportFrame& f) {
  if (!f.file.empty()) return fmt::format("{} {}:{}", f.function, BaseName(f.file), f.line);
  if (!f.function.empty()) return f.function;
  if (f.module.empty()) return fmt::format("{:#x}", f.address);
  return fmt::format("{}+{:#x}", f.module, f.offset);
}

// Where a block was allocated, as briefly as what is known allows: the innermost frame with a
// source position, else the innermost named function, else the innermost frame (FrameSite).
std::string AllocationSite(const FrameList& stack) {
  if (stack.empty()) return "unknown stack";
  for (const ReportFrame& f : stack) {
    if (!f.file.empty()) return FrameSite(f);
  }
  for (const ReportFrame& f : stack) {
    if (!f.function.empty()) return FrameSite(f);
  }
  return FrameSite(stack.front());
}

// The first application frames of a stack (CallerSelector's Caller1 and Caller2: allocation
// plumbing, the C++ runtime's internals and thin wrappers skipped), at most two; none when the
// stack has none.
std::vector<std::string> ApplicationSites(const FrameList& stack, CallerSelector& selector) {
  std::vector<ReportFrame> frames(stack.begin(), stack.end());
  CallerSelector::Callers callers = selector.Select(frames);
  std::vector<std::string> sites;
  for (int i : {callers.caller1, callers.caller2}) {
    if (i >= 0) sites.push_back(FrameSite(frames[static_cast<size_t>(i)]));
  }
  return sites;
}

// A direct record (or any, with `full`) with its whole stack; an indirect one on two lines.
void AppendRecord(std::string& text, const LeakRecord& record, bool full, FrameLines& frames,
                  CallerSelector& selector) {
  if (!full) {
    std::vector<std::string> sites = ApplicationSites(record.stack, selector);
    text +=
        fmt::format("Indirect leak of {} byte(s) in {} object(s) allocated at {}\n", record.size,
                    record.count, sites.empty() ? AllocationSite(record.stack) : sites.front());
    text += TypeLine(record);
    text += '\n';
    return;
  }
  text += RecordHeader(record);
  for (size_t i = 0; i < record.stack.size(); ++i) frames.Append(text, i, record.stack[i]);
  if (record.stack.empty()) text += "    <no stack recorded>\n";
  text += TypeLine(record);
  text += '\n';
}

std::string DescribeMember(const LeakReport& report, const CycleMember& member) {
  if (member.record == CycleMember::kNoRecord) {
    return fmt::format("{:#x} ({} B, {})", member.address, member.size, member.type);
  }
  static const FrameList kNoStack;
  const FrameList& stack =
      member.record < report.leaks.size() ? report.leaks[member.record].stack : kNoStack;
  return fmt::format("{:#x} ({} B, {}, alloc at {})", member.address, member.size, member.type,
                     AllocationSite(stack));
}

// "global 0x601040 in /usr/bin/app", "stack of thread 1234", ...
std::string RootText(const CycleRoot& root) {
  if (root.kind == "stack") return fmt::format("stack of thread {}", root.thread);
  if (root.kind == "registers") return fmt::format("registers of thread {}", root.thread);
  if (root.kind == "tls") return fmt::format("TLS of thread {}", root.thread);
  std::string text = fmt::format("{} {:#x}", root.kind, root.address);
  return root.module.empty() ? text : text + " in " + BaseName(root.module);
}

std::string CycleHeader(size_t number, const LeakCycle& cycle) {
  uint64_t bytes = 0;
  for (const CycleMember& m : cycle.members) bytes += m.size;
  if (!cycle.leaked) {
    std::string holder = cycle.root ? "held by " + RootText(*cycle.root) : "reachable";
    return fmt::format("  Cycle #{} ({}, still reachable, {} object(s), {} byte(s); {}):\n", number,
                       cycle.kind, cycle.members.size(), bytes, holder);
  }
  std::string owner =
      cycle.representative
          ? fmt::format("direct leak {:#x} ({})", cycle.members[*cycle.representative].address,
                        cycle.representative_reason)
          : "no direct leak of its own: " + cycle.representative_reason;
  std::string retaining = cycle.retained_bytes > bytes
                              ? fmt::format(", retaining {} byte(s)", cycle.retained_bytes)
                              : "";
  return fmt::format("  Cycle #{} ({}, {} block(s), {} byte(s){}; {}):\n", number, cycle.kind,
                     cycle.members.size(), bytes, retaining, owner);
}

std::string FormatCycle(const LeakReport& report, size_t number, const LeakCycle& cycle,
                        size_t max_path_blocks) {
  std::string text = CycleHeader(number, cycle);
  if (cycle.typed) text += "    " + FormatTypedPath(cycle) + "\n";
  text += "    " + FormatCyclePath(report, cycle, max_path_blocks) + "\n";
  if (cycle.root) {
    text += "    retained via: " + RootText(*cycle.root);
    for (const RetentionStep& s : cycle.root->path) {
      std::string arrow = s.field.empty() ? " -> " : " -" + s.field + "-> ";
      text += fmt::format("{}{:#x} ({})", arrow, s.address, s.type);
    }
    text += "\n";
  }
  if (cycle.path.size() < cycle.members.size()) {
    text += fmt::format("    (+{} more block(s) in this cycle, off this path)\n",
                        cycle.members.size() - cycle.path.size());
  }
  return text;
}

// Appends `records`. `text` is reserved for them at once (an upper bound: pages never written
// cost nothing) rather than doubling through copies of megabytes. Indirect records are folded to
// two lines unless `full_indirect`.
void AppendRecords(std::string& text, const std::vector<const LeakRecord*>& records,
                   bool full_indirect) {
  constexpr size_t kRecordFixed = 512;  // > header, type line without the type, separators
  constexpr size_t kFrameNumber = 16;   // > "    #12"
  FrameLines frames;
  size_t bound = text.size();
  for (const LeakRecord* r : records) {
    bound += kRecordFixed + r->type.size();
    for (const ReportFrame& f : r->stack) bound += kFrameNumber + frames.Tail(f).size();
  }
  text.reserve(bound);
  CallerSelector selector;
  for (const LeakRecord* r : records) {
    AppendRecord(text, *r, full_indirect || r->kind == LeakKind::kDirect, frames, selector);
  }
}

// The records that are not suppressed, the first max_records of them; the rest counted.
void AppendRecords(std::string& text, const LeakReport& report, const TextReportOptions& options) {
  std::vector<const LeakRecord*> records;
  uint64_t omitted = 0, omitted_bytes = 0;
  for (const LeakRecord& r : report.leaks) {
    if (!r.suppressed.empty()) continue;
    if (options.max_records != 0 && records.size() == options.max_records) {
      ++omitted;
      omitted_bytes += r.size;
      continue;
    }
    records.push_back(&r);
  }
  AppendRecords(text, records, options.full_indirect_stacks);
  if (omitted == 0) return;
  fmt::format_to(std::back_inserter(text), "... {} more records ({} bytes) omitted; see JSON\n\n",
                 omitted, omitted_bytes);
}

// The opening screen: the top direct leaks by retained bytes with their first application
// frames, the leaked cycles by kind and path, the number of reachable ones, the full report.
std::string FormatOpening(const LeakReport& report, const TextReportOptions& options) {
  std::vector<const LeakRecord*> direct;
  for (const LeakRecord& r : report.leaks) {
    if (r.kind == LeakKind::kDirect && r.suppressed.empty()) direct.push_back(&r);
  }
  std::stable_sort(direct.begin(), direct.end(), [](const LeakRecord* a, const LeakRecord* b) {
    return a->retained_bytes > b->retained_bytes;
  });
  size_t shown = std::min(options.summary_leaks, direct.size());
  std::string text;
  auto to = std::back_inserter(text);
  if (shown > 0) {
    fmt::format_to(to, "Top leaks by retained bytes ({} of {} direct record(s)):\n", shown,
                   direct.size());
  }
  CallerSelector selector;
  for (size_t i = 0; i < shown; ++i) {
    const LeakRecord& r = *direct[i];
    fmt::format_to(to, "  {} bytes retained by {} direct leak(s) of {} bytes ({})\n",
                   r.retained_bytes, r.count, r.size, r.type);
    std::vector<std::string> sites = ApplicationSites(r.stack, selector);
    if (sites.empty()) sites.push_back(AllocationSite(r.stack));
    for (size_t k = 0; k < sites.size(); ++k) {
      fmt::format_to(to, "      {} {}\n", k == 0 ? "at" : "from", sites[k]);
    }
  }
  size_t leaked = 0, reachable = 0;
  for (const LeakCycle& c : report.cycles) (c.leaked ? leaked : reachable) += 1;
  for (size_t i = 0, listed = 0; i < report.cycles.size() && listed < 3; ++i) {
    const LeakCycle& c = report.cycles[i];
    if (!c.leaked) continue;
    if (listed++ == 0) fmt::format_to(to, "Leaked cycles ({}):\n", leaked);
    fmt::format_to(to, "  {} cycle of {} block(s), {} bytes retained{}{}\n", c.kind,
                   c.members.size(), c.retained_bytes, c.typed ? ": " : "",
                   c.typed ? FormatTypedPath(c) : "");
  }
  if (reachable > 0) {
    fmt::format_to(to, "Retain cycles still reachable: {} (listed below)\n", reachable);
  }
  if (!options.full_report.empty()) {
    fmt::format_to(to, "Full report (every stack and block): {}\n", options.full_report);
  }
  return text.empty() ? text : text + "\n";
}

std::string FormatCycles(const LeakReport& report, const TextReportOptions& options) {
  if (report.cycles.empty()) return "";
  size_t shown = options.max_cycles == 0 ? report.cycles.size()
                                         : std::min(options.max_cycles, report.cycles.size());
  std::string text;
  for (size_t i = 0; i < shown; ++i) {
    const LeakCycle& c = report.cycles[i];
    if (i == 0 && c.leaked) text += "Leaked cycles:\n";
    if (!c.leaked && (i == 0 || report.cycles[i - 1].leaked)) {
      text += std::string(i == 0 ? "" : "\n") +
              "Retain cycles still reachable (leaks waiting to happen):\n";
    }
    text += FormatCycle(report, i + 1, c, options.max_path_blocks);
  }
  if (shown < report.cycles.size()) {
    text += fmt::format("... {} more cycles omitted; see JSON\n", report.cycles.size() - shown);
  }
  return text + "\n";
}

// "  type   live count  live bytes  leaked count  leaked bytes", the largest first.
std::string FormatCategories(const LeakReport& report, const TextReportOptions& options) {
  if (report.categories.empty()) return "";
  size_t shown = options.max_categories == 0
                     ? report.categories.size()
                     : std::min(options.max_categories, report.categories.size());
  std::string text = fmt::format("Categories:\n  {:<48} {:>10} {:>14} {:>10} {:>14}\n", "type",
                                 "live", "live bytes", "leaked", "leaked bytes");
  for (size_t i = 0; i < report.categories.size(); ++i) {
    const CategoryRow& r = report.categories[i];
    if (i >= shown && r.leaked_count == 0) continue;  // rows with leaks are always printed
    text += fmt::format("  {:<48} {:>10} {:>14} {:>10} {:>14}\n", r.type, r.live_count,
                        r.live_bytes, r.leaked_count, r.leaked_bytes);
  }
  size_t omitted = 0;
  for (size_t i = shown; i < report.categories.size(); ++i) {
    omitted += report.categories[i].leaked_count == 0 ? 1 : 0;
  }
  if (omitted > 0) text += fmt::format("  ... {} more categories omitted; see JSON\n", omitted);
  return text + "\n";
}

std::string SummaryLine(const LeakSummary& s) {
  return fmt::format(
      "SUMMARY: heapgraph: {} byte(s) leaked in {} allocation(s) ({} direct, {} indirect; {} "
      "{}).\n",
      s.leaked_bytes, s.direct_blocks + s.indirect_blocks, s.direct_blocks, s.indirect_blocks,
      s.cycles, s.cycles == 1 ? "cycle" : "cycles");
}

// LeakSanitizer's table of the rules that matched: count (blocks), bytes, pattern.
std::string FormatSuppressionsUsed(const LeakReport& report) {
  if (report.suppressions_used.empty()) return "";
  constexpr char kRule[] = "-----------------------------------------------------\n";
  std::string text = std::string(kRule) + "Suppressions used:\n  count      bytes template\n";
  for (const SuppressionUse& u : report.suppressions_used) {
    fmt::format_to(std::back_inserter(text), "{:>7} {:>10} {}\n", u.count, u.bytes, u.rule);
  }
  return text + kRule + "\n";
}

std::string ScanLine(const LeakReport& report) {
  const scanner::ScanStats& s = report.stats;
  const scanner::ScanTimings& t = report.timings;
  std::string method = s.stop_method.empty() ? "" : ", stopped by " + s.stop_method;
  if (s.in_stopped_world) method += ", scanned while stopped";
  std::string unreadable =
      s.unreadable_pages == 0 ? "" : fmt::format(", {} unreadable page(s)", s.unreadable_pages);
  return fmt::format(
      "Scan: {} thread(s), {} live block(s) ({} bytes), world stopped {:.2f} ms, allocations "
      "paused {:.2f} ms, longest allocation wait {:.2f} ms, total {:.2f} ms{}{}.\n",
      s.threads, s.live_blocks, s.live_bytes, t.world_stopped_ms, t.allocation_pause_ms,
      t.longest_allocation_wait_ms, t.total_ms, method, unreadable);
}

}  // namespace

std::string FormatTypedPath(const LeakCycle& cycle) {
  std::string text;
  for (size_t i : cycle.path) {
    const CycleMember& m = cycle.members[i];
    std::string separator = m.field.empty() || m.field[0] == '+'     ? ""
                            : m.field.find(' ') != std::string::npos ? " "
                                                                     : ".";
    text += m.type + separator + m.field + " -> ";
  }
  return text + (cycle.path.empty() ? "" : cycle.members[cycle.path.front()].type);
}

std::string FormatCyclePath(const LeakReport& report, const LeakCycle& cycle,
                            size_t max_path_blocks) {
  const std::vector<size_t>& path = cycle.path;
  if (path.empty()) return "(no path)";
  size_t n = path.size();
  bool elide = max_path_blocks != 0 && n > max_path_blocks;
  size_t head = elide ? (max_path_blocks + 1) / 2 : n;  // blocks printed before the gap
  size_t tail = elide ? max_path_blocks - head : 0;     // blocks printed after it
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (i >= head && i < n - tail) {
      if (i == head) text += fmt::format(" -> ... ({} more)", n - head - tail);
      continue;
    }
    text += (i == 0 ? "" : " -> ") + DescribeMember(report, cycle.members[path[i]]);
  }
  return text + fmt::format(" -> {:#x}", cycle.members[path[0]].address);
}

bool SaysOnlyNoLeaks(const LeakReport& report, const TextReportOptions& options) {
  const LeakSummary& s = report.summary;
  return report.ok && s.direct_blocks + s.indirect_blocks == 0 && report.cycles.empty() &&
         report.suppressions_used.empty() && report.warnings.empty() && report.notice.empty() &&
         report.explanations.empty() && !options.categories;
}

std::string FormatLeakReportText(const LeakReport& report, const TextReportOptions& options) {
  if (!report.ok) return "heapgraph: scan failed: " + report.error + "\n";
  const LeakSummary& s = report.summary;
  std::string text = s.direct_blocks + s.indirect_blocks == 0
                         ? "heapgraph: no leaks found\n\n"
                         : "heapgraph: detected memory leaks\n\n";
  text += FormatOpening(report, options);
  AppendRecords(text, report, options);
  text += FormatCycles(report, options);
  if (options.categories) text += FormatCategories(report, options);
  text += FormatExplanations(report.explanations);
  for (const std::string& warning : report.warnings) text += "warning: " + warning + "\n";
  if (!report.notice.empty()) text += "note: " + report.notice + "\n";
  if (report.window) {
    text += "window: blocks allocated after checkpoint \"" + report.window->checkpoint +
            "\" (sequence " + std::to_string(report.window->from_seq) + " to " +
            std::to_string(report.window->to_seq) + ")\n";
  }
  text += FormatSuppressionsUsed(report);
  text += SummaryLine(report.summary);
  text += ScanLine(report);
  return text;
}

}  // namespace heapgraph::report
