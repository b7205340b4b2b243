// bench/: the report side of a leak check alone (LeakGraph + BuildLeakReport) on synthetic leak
// sets, without a process to scan: `isolated` is 2M leaked blocks from 4,000 stacks with no
// references among them; `mixed` is 1M blocks from 4,000 stacks of which 10% form chains of 10,
// every other one closed into a cycle. The recording is an empty synthetic one, so every stack
// resolves empty with a warning (the same cost before and after a change to grouping). Prints the
// median of 3 runs per phase and a hash of the text report, so that runs of two builds can be
// checked for identical output.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "../tests/reader/SyntheticRecording.h"
#include "graph/LeakGraph.h"
#include "reader/RecordingReader.h"
#include "report/LeakReport.h"
#include "report/LeakReportText.h"
#include "report/Symbolizer.h"
#include "scanner/ScanResult.h"

namespace {

using namespace heapgraph;

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// `n` blocks in address order; a `linked_share` of them, spread evenly (every 1/share-th block),
// form chains of 10, every other chain closed into a cycle.
scanner::ScanResult MakeScan(uint32_t n, uint32_t stacks, double linked_share,
                             const std::string& dir) {
  scanner::ScanResult scan;
  scan.ok = true;
  scan.recording_dir = dir;
  scan.leaked.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t h = Mix(i + 1);
    scan.leaked[i] = {0x10000000 + uint64_t{i} * 64, 16 + (h % 4) * 16,
                      static_cast<uint32_t>(1 + (h >> 8) % stacks),
                      static_cast<uint32_t>(Mix(h) % (uint64_t{n} * 4)),
                      format::AllocFunction::kMalloc};
  }
  uint32_t stride = linked_share > 0 ? static_cast<uint32_t>(1 / linked_share) : 0;
  for (uint32_t chain = 0; stride != 0 && (chain + 1) * 10 * stride <= n; ++chain) {
    uint32_t first = chain * 10 * stride;
    for (uint32_t k = 0; k + 1 < 10; ++k) {
      scan.edges.emplace_back(first + k * stride, first + (k + 1) * stride);
    }
    if (chain % 2 == 1) scan.edges.emplace_back(first + 9 * stride, first);
  }
  return scan;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Run(const char* name, const scanner::ScanResult& scan, const std::string& dir) {
  std::vector<double> graph_ms, report_ms;
  size_t hash = 0, records = 0, cycles = 0;
  for (int rep = 0; rep < 3; ++rep) {
    RecordingReader reader(dir);
    report::Symbolizer symbolizer;
    double t0 = Now();
    graph::LeakGraph graph(scan.leaked, scan.edges);  // as RunLeakCheck: the blocks in place
    double t1 = Now();
    report::LeakReport report = report::BuildLeakReport(scan, graph, reader, symbolizer);
    double t2 = Now();
    graph_ms.push_back(t1 - t0);
    report_ms.push_back(t2 - t1);
    hash = std::hash<std::string>{}(report::FormatLeakReportText(report));
    records = report.leaks.size();
    cycles = report.cycles.size();
  }
  printf(
      "%s blocks=%zu edges=%zu graph_ms=%.1f report_ms=%.1f total_ms=%.1f records=%zu "
      "cycles=%zu text_hash=%016zx\n",
      name, scan.leaked.size(), scan.edges.size(), Median(graph_ms), Median(report_ms),
      Median(graph_ms) + Median(report_ms), records, cycles, hash);
}

}  // namespace

int main() {
  std::string dir = std::filesystem::temp_directory_path() /
                    ("heapgraph_leak_report_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  synthetic::WriteFiles(dir, synthetic::SyntheticRecording().Build());
  Run("isolated", MakeScan(2'000'000, 4000, 0, dir), dir);
  Run("mixed", MakeScan(1'000'000, 4000, 0.1, dir), dir);
  std::filesystem::remove_all(dir);
  return 0;
}
