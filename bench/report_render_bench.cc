// bench/: `heapgraph report`'s renderers on large saved reports, without a process or recording:
// a leak report of 2M leaked blocks over 4,000 direct records (500 blocks each, 9 frames per
// stack from a pool of shared frames) with 1,000 typed two-member cycles, and a FOOM report of
// 50,000 stacks (100 categories of 500 stacks, 9 frames each) with an 8-entry pressure time line.
// Each round renders every form in turn (interleaved): the JSON text (the baseline: what the check
// already writes), the JSON read back (report/ReportDocument), the text, the HTML page, (leak
// report) the SARIF log, and `heapgraph report`'s symbol pass (report/FrameResymbolizer) over every
// stack with every frame unnamed and no file of its build to be found (its worst case without
// debug files: each address searched once, each stack rebuilt). Prints, per form, the median wall
// time with min-max over the rounds, the median CPU time, the median ratio to the same round's JSON
// write, the output size, and the load average before and after. Usage: report_render_bench
// [ROUNDS] [PAGE_DIR] (default 5 rounds; with PAGE_DIR, the two pages are also written there as
// leak.html and foom.html, for bench/run_page_load.sh to load in a browser).
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report/DebugFileSearch.h"
#include "report/FoomReportHtml.h"
#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"
#include "report/FrameResymbolizer.h"
#include "report/LeakReportHtml.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportSarif.h"
#include "report/LeakReportText.h"
#include "report/ReportDocument.h"

namespace {

using namespace heapgraph;
using namespace heapgraph::report;

double Clock(clockid_t id) {
  timespec t;
  clock_gettime(id, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

std::string LoadAverage() {
  double load[3] = {};
  if (getloadavg(load, 3) != 3) return "?";
  return fmt::format("{:.2f} {:.2f} {:.2f}", load[0], load[1], load[2]);
}

ReportFrame PoolFrame(uint32_t i) {
  ReportFrame f;
  f.address = 0x555500000000 + uint64_t{i} * 0x40;
  f.module = "app";
  f.module_path = "/usr/bin/app";
  f.build_id = "00112233445566778899aabbccddeeff00112233";
  f.offset = uint64_t{i} * 0x40;
  f.function = fmt::format("app::module{}::Component{}::Function{}(int, std::string const&)",
                           i % 17, i % 101, i);
  f.file = fmt::format("src/module{}/component{}.cc", i % 17, i % 101);
  f.line = static_cast<int>(10 + i % 500);
  return f;
}

// 9 frames of stack `s`, from a pool of 2,000 frames (each resolved once, as StackResolver does).
std::vector<FrameList::Frame> StackFrames(uint32_t s, const std::vector<FrameList::Frame>& pool) {
  std::vector<FrameList::Frame> frames;
  for (uint32_t k = 0; k < 9; ++k) frames.push_back(pool[(s * 7 + k * 131) % pool.size()]);
  return frames;
}

LeakReport BigLeakReport() {
  std::vector<FrameList::Frame> pool;
  for (uint32_t i = 0; i < 2000; ++i)
    pool.push_back(std::make_shared<const ReportFrame>(PoolFrame(i)));
  LeakReport r;
  for (uint32_t s = 0; s < 4000; ++s) {
    LeakRecord rec;
    rec.stack_id = s + 1;
    rec.count = 500;
    rec.block_size = 16 + (s % 8) * 16;
    rec.size = rec.count * rec.block_size;
    rec.retained_bytes = rec.size + (s % 3) * 64;
    rec.type = fmt::format("app::Type{}", s % 300);
    for (const FrameList::Frame& f : StackFrames(s, pool)) rec.stack.push_back(f);
    rec.examples = {0x10000000 + uint64_t{s} * 0x10000, 0x10000040 + uint64_t{s} * 0x10000,
                    0x10000080 + uint64_t{s} * 0x10000};
    r.summary.direct_blocks += rec.count;
    r.summary.direct_bytes += rec.size;
    r.leaks.push_back(std::move(rec));
  }
  for (uint32_t c = 0; c < 1000; ++c) {
    LeakCycle cycle;
    cycle.kind = c % 2 == 0 ? "shared_ptr" : "function-self";
    cycle.typed = true;
    cycle.members = {{.address = 0x10000000 + uint64_t{c} * 0x10000,
                      .size = 64,
                      .type = "app::Session",
                      .stack_id = c + 1,
                      .record = c,
                      .field = "_callback"},
                     {.address = 0x20000000 + uint64_t{c} * 0x10000,
                      .size = 48,
                      .type = "std::function<void ()>",
                      .stack_id = c + 1,
                      .record = c,
                      .field = "session"}};
    cycle.retained_bytes = 112;
    cycle.representative = 0;
    cycle.representative_reason = "earliest allocated";
    cycle.path = {0, 1};
    r.cycles.push_back(std::move(cycle));
  }
  r.summary.leaked_bytes = r.summary.direct_bytes;
  r.summary.cycles = r.cycles.size();
  r.stats.stop_method = "ptrace";
  r.recording_dir = "/tmp/rec";
  return r;
}

FoomReport BigFoomReport() {
  FoomReport r;
  r.directory = "/tmp/rec/1-2";
  r.exit.kind = "oom_kill";
  r.exit.reason = "the cgroup's oom_kill counter rose";
  for (uint32_t c = 0; c < 100; ++c) {
    FoomCategory cat;
    cat.name = fmt::format("Malloc {} B", 16 * (c + 1));
    cat.kind = "heap";
    cat.stack_count = 500;
    for (uint32_t s = 0; s < 500; ++s) {
      FoomStack stack;
      stack.stack_id = c * 500 + s + 1;
      stack.count = 100 + s;
      stack.bytes = stack.count * 16 * (c + 1);
      for (uint32_t k = 0; k < 9; ++k)
        stack.frames.push_back(PoolFrame((stack.stack_id * 7 + k * 131) % 2000));
      cat.count += stack.count;
      cat.bytes += stack.bytes;
      cat.stacks.push_back(std::move(stack));
    }
    r.live.count += cat.count;
    r.live.bytes += cat.bytes;
    r.categories.push_back(std::move(cat));
  }
  std::sort(r.categories.begin(), r.categories.end(),
            [](const FoomCategory& a, const FoomCategory& b) { return a.bytes > b.bytes; });
  r.categories[0].suspect_reasons = {"holds the most bytes"};
  r.feature = FeatureValue{"app::Cache::Grow()", "main", r.categories[0].name, "oom_kill"};
  format::PressureHeader h = {};
  h.watermark_count = 2;
  h.watermarks[0] = 50;
  h.watermarks[1] = 90;
  std::vector<PressureEntry> entries(8);
  for (uint32_t i = 0; i < entries.size(); ++i) {
    entries[i].record.watermark = 50;
    entries[i].record.elapsed_ns = uint64_t{i + 1} * 1000000000;
    entries[i].record.limit = uint64_t{1} << 30;
    entries[i].record.rss = (uint64_t{1} << 27) * (i + 1);
    entries[i].record.heap_bytes = entries[i].record.rss / 2;
  }
  r.pressure = PressureTimeline(h, std::move(entries), false);
  return r;
}

struct Sample {
  double wall = 0, cpu = 0, ratio = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Report(const char* title, const std::vector<std::string>& order,
            std::map<std::string, std::vector<Sample>>& samples,
            std::map<std::string, size_t>& sizes) {
  fmt::print("{}\n  {:<10} {:>22} {:>10} {:>12} {:>12}\n", title, "form", "wall ms med [min-max]",
             "cpu ms", "x JSON write", "bytes");
  for (const std::string& name : order) {
    std::vector<double> wall, cpu, ratio;
    for (const Sample& s : samples[name]) {
      wall.push_back(s.wall);
      cpu.push_back(s.cpu);
      ratio.push_back(s.ratio);
    }
    fmt::print("  {:<10} {:>8.1f} [{:.1f}-{:.1f}] {:>10.1f} {:>12.2f} {:>12}\n", name, Median(wall),
               *std::min_element(wall.begin(), wall.end()),
               *std::max_element(wall.begin(), wall.end()), Median(cpu), Median(ratio),
               sizes[name]);
  }
}

// `frames` with no function, file or line: as a stripped build records them.
template <typename Frames>
std::vector<ReportFrame> Unnamed(const Frames& frames) {
  std::vector<ReportFrame> out;
  for (ReportFrame f : frames) {
    f.function.clear();
    f.file.clear();
    f.line = 0;
    f.inlined = false;
    out.push_back(std::move(f));
  }
  return out;
}

// The symbol pass of one `heapgraph report` run (fresh search and memo) over `stacks`; returns a
// string as long as the frames it gave.
std::string SymbolPass(const std::vector<std::vector<ReportFrame>>& stacks) {
  DebugFileSearch search({.debug_dirs = {}, .debuginfod = false});
  Symbolizer symbolizer;
  FrameResymbolizer resymbolizer(search, symbolizer);
  size_t frames = 0;
  for (const std::vector<ReportFrame>& stack : stacks) frames += resymbolizer.Resolve(stack).size();
  return std::string(frames, 'x');
}

// One round: every form once, in order; ratios against this round's "json".
void Round(const std::vector<std::pair<std::string, std::function<std::string()>>>& forms,
           std::map<std::string, std::vector<Sample>>& samples,
           std::map<std::string, size_t>& sizes) {
  std::map<std::string, Sample> round;
  for (const auto& [name, render] : forms) {
    double w0 = Clock(CLOCK_MONOTONIC), c0 = Clock(CLOCK_PROCESS_CPUTIME_ID);
    std::string out = render();
    round[name] = {Clock(CLOCK_MONOTONIC) - w0, Clock(CLOCK_PROCESS_CPUTIME_ID) - c0, 0};
    sizes[name] = out.size();
  }
  for (auto& [name, s] : round) {
    s.ratio = s.wall / round["json"].wall;
    samples[name].push_back(s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::max(1, atoi(argv[1])) : 5;
  fmt::print("load average before: {}\n", LoadAverage());
  LeakReport leak = BigLeakReport();
  std::string leak_json = LeakReportJsonText(leak);
  FoomReport foom = BigFoomReport();
  std::string foom_json = FoomReportJsonText(foom);
  std::vector<std::vector<ReportFrame>> leak_stacks, foom_stacks;
  for (const LeakRecord& r : leak.leaks) leak_stacks.push_back(Unnamed(r.stack));
  for (const FoomCategory& c : foom.categories) {
    for (const FoomStack& s : c.stacks) foom_stacks.push_back(Unnamed(s.frames));
  }
  std::vector<std::pair<std::string, std::function<std::string()>>> leak_forms = {
      {"json", [&] { return LeakReportJsonText(leak); }},
      {"read", [&] { return std::string(ParseReportDocument(leak_json).leak->leaks.size(), 'x'); }},
      {"text", [&] { return FormatLeakReportText(leak, {.max_records = 50}); }},
      {"html", [&] { return LeakReportHtml(leak); }},
      {"sarif", [&] { return LeakReportSarifText(leak); }},
      {"symbols", [&] { return SymbolPass(leak_stacks); }}};
  std::vector<std::pair<std::string, std::function<std::string()>>> foom_forms = {
      {"json", [&] { return FoomReportJsonText(foom); }},
      {"read",
       [&] { return std::string(ParseReportDocument(foom_json).foom->categories.size(), 'x'); }},
      {"text", [&] { return FoomReportToText(foom); }},
      {"html", [&] { return FoomReportHtml(foom); }},
      {"symbols", [&] { return SymbolPass(foom_stacks); }}};
  std::map<std::string, std::vector<Sample>> leak_samples, foom_samples;
  std::map<std::string, size_t> leak_sizes, foom_sizes;
  for (int i = 0; i < rounds; ++i) {
    Round(leak_forms, leak_samples, leak_sizes);
    Round(foom_forms, foom_samples, foom_sizes);
  }
  leak_sizes["read"] = leak_json.size();
  foom_sizes["read"] = foom_json.size();
  Report("leak report: 2M blocks, 4,000 records, 1,000 cycles (read: bytes of the JSON read)",
         {"json", "read", "text", "html", "sarif", "symbols"}, leak_samples, leak_sizes);
  Report("FOOM report: 50,000 stacks in 100 categories",
         {"json", "read", "text", "html", "symbols"}, foom_samples, foom_sizes);
  fmt::print("rounds: {}; load average after: {}\n", rounds, LoadAverage());
  if (argc > 2) {
    for (const auto& [name, page] : {std::pair{"leak.html", LeakReportHtml(leak)},
                                     std::pair{"foom.html", FoomReportHtml(foom)}}) {
      std::string path = std::string(argv[2]) + "/" + name;
      FILE* out = fopen(path.c_str(), "w");
      if (out == nullptr || fwrite(page.data(), 1, page.size(), out) != page.size()) {
        fmt::print(stderr, "cannot write {}\n", path);
        return 1;
      }
      fclose(out);
    }
  }
  return 0;
}
