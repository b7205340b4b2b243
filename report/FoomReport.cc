#include "report/FoomReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "reader/LagRecords.h"
#include "reader/TypesFile.h"
#include "report/BaseName.h"
#include "report/CallerSelector.h"
#include "report/StackResolver.h"

namespace heapgraph::report {
namespace {

struct CategoryTotals {
  FoomCategory category;
  SampleEstimate estimate;
  std::unordered_map<uint32_t, SampleEstimate> stacks;
};

FoomTotals Totals(const SampleEstimate& e) {
  FoomTotals t;
  t.count = static_cast<uint64_t>(std::llround(e.count()));
  t.bytes = static_cast<uint64_t>(std::llround(e.bytes()));
  t.sampled = e.samples();
  t.count_error = e.count_error();
  t.bytes_error = e.bytes_error();
  return t;
}

// Category index of every block, with heap size categories cached by size (one name per size).
class Categorizer {
 public:
  Categorizer(std::vector<CategoryTotals>* out, const TypesFile* types)
      : out_(out), types_(types) {}

  CategoryTotals& For(const LiveBlock& block) {
    if (types_ != nullptr && block.tree == TreeKind::kHeap) {
      if (const std::string* type = types_->TypeOf(block.address, block.seq)) {
        return (*out_)[Index(*type, "type")];
      }
    }
    bool vm = format::IsVmFunction(block.function);
    if (vm) return Named(format::AllocFunction::kMmap, 0, "vm", &vm_index_);
    auto [it, inserted] = by_size_.try_emplace(block.size, 0);
    if (inserted) {
      it->second = Index(CategoryName(block.function, block.size), "heap");
    }
    return (*out_)[it->second];
  }

 private:
  CategoryTotals& Named(format::AllocFunction f, uint64_t size, const char* kind, size_t* cache) {
    if (*cache == SIZE_MAX) *cache = Index(CategoryName(f, size), kind);
    return (*out_)[*cache];
  }
  size_t Index(const std::string& name, const char* kind) {
    auto [it, inserted] = by_name_.try_emplace(name, out_->size());
    if (inserted) {
      out_->emplace_back();
      out_->back().category.name = name;
      out_->back().category.kind = kind;
    }
    return it->second;
  }

  std::vector<CategoryTotals>* out_;
  const TypesFile* types_;
  std::unordered_map<uint64_t, size_t> by_size_;
  std::unordered_map<std::string, size_t> by_name_;
  size_t vm_index_ = SIZE_MAX;
};

bool ByBytes(const FoomCategory& a, const FoomCategory& b) {
  if (a.bytes != b.bytes) return a.bytes > b.bytes;
  if (a.count != b.count) return a.count > b.count;
  return a.name < b.name;
}

// The top `m` stacks of one category, bytes descending (ties: count, then stack id).
std::vector<FoomStack> TopStacks(const std::unordered_map<uint32_t, SampleEstimate>& stacks,
                                 size_t m) {
  std::vector<FoomStack> all;
  all.reserve(stacks.size());
  for (const auto& [id, e] : stacks) {
    FoomStack s;
    static_cast<FoomTotals&>(s) = Totals(e);
    s.stack_id = id;
    all.push_back(std::move(s));
  }
  auto order = [](const FoomStack& a, const FoomStack& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.count != b.count) return a.count > b.count;
    return a.stack_id < b.stack_id;
  };
  size_t keep = std::min(m, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), order);
  all.resize(keep);
  return all;
}

std::vector<ReportFrame> Resolve(const RecordingReader& reader, StackResolver* resolver,
                                 uint32_t stack) {
  if (resolver != nullptr) return resolver->Resolve(stack).ToVector();
  std::vector<ReportFrame> frames;
  if (stack == 0) return frames;
  for (uint64_t address : reader.Frames(stack)) {
    ReportFrame f;
    f.address = address;
    if (std::optional<ModuleLocation> where = reader.Locate(address)) {
      const format::ModuleRecord& m = reader.modules()[where->module];
      f.module_path = std::string(m.path, strnlen(m.path, sizeof(m.path)));
      f.module = BaseName(f.module_path);
      f.offset = where->offset;
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

// A kill that left no trace (no exit, signal or OOM counter evidence) while a lag was in
// progress: the watchdog's kill of a hung program, named by the lag's stack.
bool KilledWithoutTrace(const std::string& kind) {
  return kind == "likely_oom_kill" || kind == "unknown" || kind == "hang";
}

void FindCrashLag(const RecordingReader& reader, StackResolver* resolver, FoomReport& report) {
  try {
    LagRecords lag(reader.directory());
    if (lag.torn()) report.warnings.push_back("lag: the last record was torn by the kill");
    const format::LagRecord* open = lag.InProgress();
    if (open == nullptr || !KilledWithoutTrace(report.exit.kind)) return;
    CrashLag c;
    c.tid = open->tid;
    c.duration_ns = open->duration_ns;
    c.repeats = open->stack_repeats;
    c.samples = open->sample_count;
    c.stack.stack_id = open->stack;
    c.stack.frames = Resolve(reader, resolver, open->stack);
    report.exit.kind = "hang";
    report.exit.reason = fmt::format(
        "killed during a lag (crash-lag): a unit of work of thread {} had run at least {:.1f} s",
        c.tid, static_cast<double>(c.duration_ns) / 1e9);
    report.crash_lag = std::move(c);
  } catch (const RecordingError& e) {
    report.warnings.push_back(std::string(e.what()) + " (no crash-lag)");
  }
}

}  // namespace

std::optional<FeatureValue> FoomFeature(const FoomReport& report) {
  const FoomCategory* chosen = nullptr;
  std::string reason;
  for (const FoomCategory& c : report.categories) {
    if (!c.suspect_reasons.empty()) {
      chosen = &c;
      reason = c.suspect_reasons.front();
      break;
    }
  }
  if (chosen == nullptr && !report.categories.empty()) {
    chosen = &report.categories.front();
    reason = "largest category (no rule matched)";
  }
  if (chosen == nullptr) return std::nullopt;
  FeatureValue f;
  f.category = chosen->name;
  f.reason = reason;
  if (!chosen->stacks.empty()) {
    const std::vector<ReportFrame>& frames = chosen->stacks.front().frames;
    CallerSelector selector;
    CallerSelector::Callers callers = selector.Select(frames);
    if (callers.caller1 >= 0) f.caller1 = FrameLabel(frames[static_cast<size_t>(callers.caller1)]);
    if (callers.caller2 >= 0) f.caller2 = FrameLabel(frames[static_cast<size_t>(callers.caller2)]);
  }
  return f;
}

std::string FrameLabel(const ReportFrame& frame) {
  if (!frame.function.empty()) {
    if (frame.line > 0) {
      return fmt::format("{} ({}:{})", frame.function, BaseName(frame.file), frame.line);
    }
    return frame.function;
  }
  if (frame.module.empty()) return fmt::format("{:#x}", frame.address);
  if (frame.build_id.empty()) return fmt::format("{}+{:#x}", frame.module, frame.offset);
  return fmt::format("{}+{:#x} (build-id {})", frame.module, frame.offset, frame.build_id);
}

FoomReport BuildFoomReport(const RecordingReader& reader, const ExitRecord& exit,
                           Symbolizer* symbolizer, const FoomReportOptions& options) {
  FoomReport report;
  report.directory = reader.directory();
  report.exit = exit;
  report.session = reader.session();
  report.dropped = reader.dropped();
  report.torn = reader.torn();
  for (const TornNode& t : report.torn) report.torn_records += t.records;
  report.warnings = reader.warnings();
  std::optional<TypesFile> types;
  try {
    types = TypesFile::Read(reader.directory());
  } catch (const RecordingError& e) {
    report.warnings.push_back(std::string(e.what()) + " (size categories used instead)");
  }
  try {
    PressureTimeline pressure(reader.directory());
    if (pressure.present()) report.pressure = std::move(pressure);
    if (report.pressure && report.pressure->truncated()) {
      report.warnings.push_back("pressure: the last entry was cut short by the kill (dropped)");
    }
  } catch (const RecordingError& e) {
    report.warnings.push_back(std::string(e.what()) + " (no time line)");
  }
  report.sample_mean = reader.sample_mean();
  std::vector<CategoryTotals> totals;
  Categorizer categorizer(&totals, types ? &*types : nullptr);
  for (const LiveBlock& block : reader.blocks()) {
    uint64_t mean = reader.SampleMeanOf(block);
    CategoryTotals& c = categorizer.For(block);
    if (c.estimate.samples() == 0) c.estimate = SampleEstimate(mean);
    c.estimate.Add(block.size);
    c.stacks.try_emplace(block.stack, mean).first->second.Add(block.size);
  }
  SampleEstimate live;  // the categories partition the blocks
  for (const CategoryTotals& c : totals) live.Merge(c.estimate);
  report.live = Totals(live);
  for (CategoryTotals& c : totals) {
    static_cast<FoomTotals&>(c.category) = Totals(c.estimate);
    c.category.stack_count = c.stacks.size();
    c.category.suspect_reasons = options.rules.Evaluate(c.category.name, c.category.count,
                                                        c.category.bytes, report.live.bytes);
  }
  std::sort(totals.begin(), totals.end(), [](const CategoryTotals& a, const CategoryTotals& b) {
    return ByBytes(a.category, b.category);
  });
  std::optional<StackResolver> resolver;
  if (symbolizer != nullptr) resolver.emplace(reader, *symbolizer);
  for (size_t i = 0; i < totals.size(); ++i) {
    FoomCategory& c = totals[i].category;
    if (i < options.top_categories || !c.suspect_reasons.empty()) {
      c.stacks = TopStacks(totals[i].stacks, options.top_stacks);
      for (FoomStack& s : c.stacks) {
        try {
          s.frames = Resolve(reader, resolver ? &*resolver : nullptr, s.stack_id);
        } catch (const RecordingError& e) {
          report.warnings.push_back(fmt::format("stack {}: {}", s.stack_id, e.what()));
        }
      }
    }
    report.categories.push_back(std::move(c));
  }
  FindCrashLag(reader, resolver ? &*resolver : nullptr, report);
  if (resolver) {
    for (const std::string& w : resolver->warnings()) report.warnings.push_back(w);
    for (const std::string& r : symbolizer->refused()) report.warnings.push_back(r);
  }
  report.feature = FoomFeature(report);
  return report;
}

}  // namespace heapgraph::report
