#include "report/DumpReportText.h"

#include <fmt/format.h>

#include <cmath>

#include "reader/ByteSize.h"

namespace heapgraph::report {
namespace {

// "≈ 1000512 ± 9120 blocks, ≈ 61.07 MiB ± 0.56 MiB": an estimate with one standard error.
std::string EstimateText(const SampleEstimate& e) {
  return fmt::format("≈ {:.0f} ± {:.0f} blocks, ≈ {} ± {}", e.count(), e.count_error(),
                     ByteSize::Readable(static_cast<uint64_t>(std::llround(e.bytes()))),
                     ByteSize::Readable(static_cast<uint64_t>(std::llround(e.bytes_error()))));
}

void AppendSummary(std::string& out, const DumpReport& r) {
  out += fmt::format("{}: {} live blocks, {}, {} unique stacks, {} torn, {} dropped, {} modules",
                     r.directory, r.live_blocks, ByteSize::Readable(r.live_bytes), r.unique_stacks,
                     r.torn.size(), r.dropped, r.modules);
  if (r.stacks_dropped != 0) out += fmt::format(", {} stacks not stored", r.stacks_dropped);
  if (r.session) {
    out += fmt::format(" (pid {}, {}, {})", r.session->pid, r.session->executable,
                       SessionStateName(r.session->state));
  }
  out += "\n";
  if (r.sample_mean != 0) {
    out += fmt::format(
        "sampled recording (sample={}): the blocks above are a sample; estimated live {} "
        "(± one standard error)\n",
        ByteSize::Readable(r.sample_mean), EstimateText(r.live));
  }
}

void AppendTorn(std::string& out, const TornNode& t) {
  if (t.index == format::kRehashing) {
    out += fmt::format("torn: {} shard {} (writer died rehashing it; {} records not read)\n",
                       TreeFileName(t.tree), t.shard, t.records);
    return;
  }
  out += fmt::format("torn: {} shard {} node {} ({})\n", TreeFileName(t.tree), t.shard, t.index,
                     t.marked ? "writer died while changing it" : "inconsistent, skipped");
}

// "function file:line [inlined]", "??" for an unnamed function.
std::string SourceText(const ReportFrame& f) {
  std::string text = f.function.empty() ? "??" : f.function;
  if (!f.file.empty()) text += fmt::format(" {}:{}", f.file, f.line);
  if (f.inlined) text += " [inlined]";
  return text;
}

void AppendAddress(std::string& out, size_t index, const DumpAddress& a) {
  const ReportFrame& where = a.where();
  out += fmt::format("    #{} {:#x}", index, where.address);
  if (!a.in_module()) {
    out += " ??";
  } else {
    out += fmt::format(" {}+{:#x}", where.module, where.offset);
    if (!where.build_id.empty()) out += fmt::format(" (build-id {})", where.build_id);
  }
  if (!a.symbolized()) {
    out += "\n";
    return;
  }
  out += " " + SourceText(where) + "\n";
  for (size_t i = 1; i < a.frames.size(); ++i) {
    out += fmt::format("        in {}\n", SourceText(a.frames[i]));
  }
}

void AppendGroup(std::string& out, const DumpGroup& d) {
  const StackGroup& g = d.group;
  const char* plural = g.count == 1 ? "" : "s";
  if (g.estimate.mean() != 0) {
    out += fmt::format("#{} {} sampled block{} ({}), {}, {} (stack {})\n", d.rank, g.count, plural,
                       ByteSize::Readable(g.bytes), EstimateText(g.estimate), g.category, g.stack);
  } else {
    out += fmt::format("#{} {} block{}, {}, {} (stack {})\n", d.rank, g.count, plural,
                       ByteSize::Readable(g.bytes), g.category, g.stack);
  }
  if (g.stack == 0) out += "    (no stack captured)\n";
  for (size_t i = 0; i < d.addresses.size(); ++i) AppendAddress(out, i, d.addresses[i]);
}

}  // namespace

std::string DumpReportToText(const DumpReport& r) {
  std::string out;
  AppendSummary(out, r);
  for (const TornNode& t : r.torn) AppendTorn(out, t);
  for (const DumpGroup& g : r.groups) AppendGroup(out, g);
  if (r.unreadable_stack.empty() && r.groups.size() < r.group_count) {
    out += fmt::format("... {} more groups (--top 0 shows all)\n", r.group_count - r.groups.size());
  }
  return out;
}

}  // namespace heapgraph::report
