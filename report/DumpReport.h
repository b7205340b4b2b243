// report/: the dump report model and its builder: what `heapgraph dump` shows of one recording
// directory. The recording's totals (live blocks and bytes, distinct stacks, torn records, dropped
// inserts, modules, the session), then its live blocks grouped by (stack, category) the way
// RecordingReader::GroupByStack() ranks them, the top groups with their stacks resolved by
// StackResolver. In a sampled recording (heap.tree version 3) the totals and every sampled group
// also carry their SampleEstimate. DumpReportText.h and DumpReportJson.h format it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reader/RecordingReader.h"
#include "reader/SampleEstimate.h"
#include "report/FrameList.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {

// One return address of a stack with StackResolver's frames for it, which all share its address,
// module, build-id and offset. Invariant: `frames` is never empty; it is either one frame without
// source (not symbolized, or outside every module) or the address's inline chain, inlined callees
// first and the containing function last.
struct DumpAddress {
  FrameList frames;

  const ReportFrame& where() const { return frames.front(); }
  // Whether a module covers the address. A module recorded without a path still has an offset
  // (a return address is never a module's first byte) or a build-id.
  bool in_module() const;
  // Whether `frames` hold source positions (a function or a line was found).
  bool symbolized() const;
};

// One group of live blocks and its stack.
struct DumpGroup {
  size_t rank = 0;                     // 1-based, in GroupByStack() order
  StackGroup group;                    // stack id, count, bytes, category, estimate
  std::vector<DumpAddress> addresses;  // innermost first; empty for stack 0
};

struct DumpReport {
  std::string directory;
  uint64_t live_blocks = 0;
  uint64_t live_bytes = 0;
  size_t unique_stacks = 0;  // distinct stack ids among all groups (0 counts as one)
  uint64_t dropped = 0;      // inserts the recorder refused (every shard's count)
  uint64_t stacks_dropped = 0;
  size_t modules = 0;
  std::optional<SessionInfo> session;
  uint64_t sample_mean = 0;  // 0: a full recording
  SampleEstimate live;       // estimated true totals of every live block
  std::vector<TornNode> torn;
  // The reader's non-fatal problems, then the module files the Symbolizer refused.
  std::vector<std::string> warnings;
  size_t group_count = 0;  // every group; `groups` holds the top ones
  std::vector<DumpGroup> groups;
  // Non-empty: the message of the RecordingError that stopped the report at the first top group
  // whose stack could not be read; `groups` holds only the groups before it.
  std::string unreadable_stack;
};

struct DumpReportOptions {
  size_t top = 20;  // groups whose stacks are resolved, largest first; 0 = all
};

// `symbolizer` may be null (frames keep module + offset only). A stack that cannot be read ends
// the report (DumpReport::unreadable_stack) rather than throwing; stacks of the groups past
// options.top are never read.
DumpReport BuildDumpReport(const RecordingReader& reader, Symbolizer* symbolizer,
                           const DumpReportOptions& options);

// "recording", "exited" or "unknown state" for SessionInfo::state.
const char* SessionStateName(uint32_t state);
// The file a tree kind is read from: "heap.tree" or "vm.tree".
const char* TreeFileName(TreeKind tree);

}  // namespace heapgraph::report
