#include "report/DumpReport.h"

#include <algorithm>
#include <set>
#include <utility>

#include "report/StackResolver.h"

namespace heapgraph::report {
namespace {

size_t UniqueStacks(const std::vector<StackGroup>& groups) {
  std::set<uint32_t> stacks;
  for (const StackGroup& g : groups) stacks.insert(g.stack);
  return stacks.size();
}

// Splits a stack's flattened frames back into its return addresses: an address's frames end with
// its containing function (inlined = false), or where the next address begins.
std::vector<DumpAddress> SplitByAddress(const FrameList& frames) {
  std::vector<DumpAddress> addresses;
  bool open = false;  // the last address's chain may go on
  for (const ReportFrame& f : frames) {
    if (!open || addresses.back().where().address != f.address) addresses.emplace_back();
    addresses.back().frames.push_back(f);
    open = f.inlined;
  }
  return addresses;
}

}  // namespace

bool DumpAddress::in_module() const {
  const ReportFrame& f = where();
  return !f.module_path.empty() || f.offset != 0 || !f.build_id.empty();
}

bool DumpAddress::symbolized() const {
  return frames.size() > 1 || !where().function.empty() || where().line != 0;
}

DumpReport BuildDumpReport(const RecordingReader& reader, Symbolizer* symbolizer,
                           const DumpReportOptions& options) {
  DumpReport report;
  report.directory = reader.directory();
  report.live_blocks = reader.blocks().size();
  report.live_bytes = reader.live_bytes();
  report.dropped = reader.dropped();
  report.stacks_dropped = reader.stack_stats().dropped;
  report.modules = reader.modules().size();
  report.session = reader.session();
  report.sample_mean = reader.sample_mean();
  if (report.sample_mean != 0) report.live = reader.EstimateLive();
  report.torn = reader.torn();
  report.warnings = reader.warnings();
  std::vector<StackGroup> groups = reader.GroupByStack();
  report.unique_stacks = UniqueStacks(groups);
  report.group_count = groups.size();
  size_t shown = options.top == 0 ? groups.size() : std::min(options.top, groups.size());
  StackResolver resolver(reader, symbolizer);
  for (size_t i = 0; i < shown; ++i) {
    DumpGroup group{i + 1, std::move(groups[i]), {}};
    try {
      group.addresses = SplitByAddress(resolver.ResolveOrThrow(group.group.stack));
    } catch (const RecordingError& e) {
      report.unreadable_stack = e.what();
      break;
    }
    report.groups.push_back(std::move(group));
  }
  if (symbolizer != nullptr) {
    for (const std::string& r : symbolizer->refused()) report.warnings.push_back(r);
  }
  return report;
}

const char* SessionStateName(uint32_t state) {
  switch (state) {
    case format::kSessionRecording:
      return "recording";
    case format::kSessionExited:
      return "exited";
    default:
      return "unknown state";
  }
}

const char* TreeFileName(TreeKind tree) {
  return tree == TreeKind::kHeap ? format::kHeapTreeFile : format::kVmTreeFile;
}

}  // namespace heapgraph::report
