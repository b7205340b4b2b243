#include "report/LagReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "reader/LagRecords.h"
#include "reader/RecordingError.h"
#include "reader/RecordingReader.h"
#include "report/StackResolver.h"

namespace heapgraph::report {
namespace {

// Copies the record's stack, ring and CPU into `lag` (a later record of the same lag replaces the
// stack: annealing writes again only when the most time-consuming stack changed).
void TakeRecord(const format::LagRecord& r, LagEntry& lag) {
  ++lag.records;
  lag.last_ns = r.realtime_ns;
  lag.duration_ns = std::max(lag.duration_ns, r.duration_ns);
  lag.cpu_permille = std::max(lag.cpu_permille, r.cpu_permille);
  if (r.stack != 0 || lag.stack_id == 0) {
    lag.stack_id = r.stack;
    lag.repeats = r.stack_repeats;
    lag.samples.assign(r.samples, r.samples + r.sample_count);
  }
  lag.samples_missed = r.samples_missed;
}

LagEntry NewLag(const format::LagRecord& r, const char* kind) {
  LagEntry lag;
  lag.kind = kind;
  lag.tid = r.tid;
  lag.unit = r.unit;
  lag.start_ns = r.realtime_ns > r.duration_ns ? r.realtime_ns - r.duration_ns : 0;
  lag.open = r.kind == format::kLagLong;
  return lag;
}

std::vector<LagEntry> Merge(const std::vector<format::LagRecord>& records) {
  std::vector<LagEntry> lags;
  std::map<std::pair<int32_t, uint64_t>, size_t> long_lags;  // (tid, unit) -> index in lags
  for (const format::LagRecord& r : records) {
    auto key = std::make_pair(r.tid, r.unit);
    if (r.kind == format::kLagCpu) {
      lags.push_back(NewLag(r, "cpu"));
      TakeRecord(r, lags.back());
    } else if (r.kind == format::kLagLong) {
      auto [it, inserted] = long_lags.try_emplace(key, lags.size());
      if (inserted) lags.push_back(NewLag(r, "long"));
      TakeRecord(r, lags[it->second]);
    } else if (r.kind == format::kLagEnded) {
      auto it = long_lags.find(key);
      if (it == long_lags.end()) continue;  // its lag record was not written (or was torn)
      LagEntry& lag = lags[it->second];
      lag.ended = true;
      lag.open = false;
      lag.duration_ns = std::max(lag.duration_ns, r.duration_ns);
    }
  }
  return lags;
}

}  // namespace

LagReport BuildLagReport(const std::string& directory, Symbolizer* symbolizer) {
  LagReport report;
  report.directory = directory;
  LagRecords file(directory);
  report.present = file.present();
  if (!report.present) return report;
  report.header = file.header();
  report.torn = file.torn();
  report.lags = Merge(file.records());
  if (report.lags.empty()) return report;
  try {
    RecordingReader reader(directory, RecordingReader::Content::kStacksAndModules);
    StackResolver resolver(reader, symbolizer);
    for (LagEntry& lag : report.lags) lag.frames = resolver.Resolve(lag.stack_id).ToVector();
    for (const std::string& w : resolver.warnings()) report.warnings.push_back(w);
    if (symbolizer != nullptr) {
      for (const std::string& r : symbolizer->refused()) report.warnings.push_back(r);
    }
  } catch (const RecordingError& e) {
    report.warnings.push_back(fmt::format("{} (stacks not resolved)", e.what()));
  }
  return report;
}

}  // namespace heapgraph::report
