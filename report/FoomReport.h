// report/: the FOOM report model and its builder (seed 000's reporting rules). From one recording
// directory (the live-allocation state a killed process left behind): how the run ended; every
// category (the block's C++/ObjC type from the `types` file when it names the block, else the size
// category "Malloc 48.00KiB", or "VM: anonymous") with block counts and bytes;
// identical stacks merged inside each category; the top-N categories by bytes with their top-M
// stacks; suspect categories by SuspectRules; and the feature value (Caller1, Caller2, Category,
// Reason) used to cluster many reports; the memory-pressure time line (the `pressure` file's
// watermark entries) when the watcher ran. In a sampled recording (heap.tree version 3) every
// count and byte total is a Horvitz-Thompson estimate (SampleEstimate) with its standard error.
// FoomReportText.h and FoomReportJson.h format it; docs/foom-report.md documents the JSON form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reader/PressureTimeline.h"
#include "reader/RecordingReader.h"
#include "report/ExitRecord.h"
#include "report/LeakReport.h"
#include "report/SuspectRules.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {

// Counts and bytes are exact in a full recording; in a sampled one they are estimates (rounded)
// from `sampled` recorded blocks, with one standard error each.
struct FoomTotals {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t sampled = 0;  // blocks in the dump
  double count_error = 0;
  double bytes_error = 0;
};

struct FoomStack : FoomTotals {
  uint32_t stack_id = 0;
  std::vector<ReportFrame> frames;  // innermost first; empty when not resolved or stack 0
};

struct FoomCategory : FoomTotals {
  std::string name;
  std::string kind;               // "heap" (size category), "vm" (anonymous mappings) or "type"
  size_t stack_count = 0;         // distinct stacks in the category
  std::vector<FoomStack> stacks;  // top-M by bytes, only for the top-N categories and suspects
  std::vector<std::string> suspect_reasons;  // empty: not suspect
};

// Seed 000's characteristic value: Caller1 = the first meaningful frame above the allocator and
// its wrappers, Caller2 = the business frame above it, both from the largest stack of Category.
struct FeatureValue {
  std::string caller1;
  std::string caller2;
  std::string category;
  std::string reason;
};

// The lag in progress when the process died (heap/lag/, reader/LagRecords): the run was killed
// during a lag ("crash-lag", seed 003), so a kill without a trace is a hang, named by this stack.
struct CrashLag {
  int32_t tid = 0;
  uint64_t duration_ns = 0;  // the unit's run time at its last record
  uint32_t repeats = 0;      // samples with the stack's top function
  uint32_t samples = 0;      // samples of the unit in the ring
  FoomStack stack;           // the most time-consuming stack
};

struct FoomReport {
  std::string directory;
  ExitRecord exit;
  std::optional<SessionInfo> session;
  uint64_t sample_mean = 0;  // 0: a full recording
  FoomTotals live;           // every live block (heap and VM)
  uint64_t dropped = 0;
  std::vector<TornNode> torn;            // slots/nodes a writer was changing when the process died
  uint64_t torn_records = 0;             // records those entries may have held (not counted above)
  std::vector<FoomCategory> categories;  // every category, bytes descending
  std::optional<FeatureValue> feature;
  std::optional<PressureTimeline> pressure;  // the watcher's time line, when it wrote one
  std::optional<CrashLag> crash_lag;         // killed during a lag: exit.kind is then "hang"
  std::vector<std::string> warnings;
};

struct FoomReportOptions {
  size_t top_categories = 10;  // N: categories whose stacks are reported
  size_t top_stacks = 5;       // M: stacks per such category
  SuspectRules rules = SuspectRules::Defaults();
};

// `symbolizer` may be null (frames keep module + offset only).
FoomReport BuildFoomReport(const RecordingReader& reader, const ExitRecord& exit,
                           Symbolizer* symbolizer, const FoomReportOptions& options);

// "function (file:line)", "function", "module+0x1f0 (build-id 3f2a...)" (an unnamed frame: which
// build's debug file would name it; without a build-id "module+0x1f0"), or "0x7f..." for a frame.
std::string FrameLabel(const ReportFrame& frame);

// Seed 000's feature value of `report`: the first suspect category (else the largest), its reason,
// and Caller1/Caller2 (report/CallerSelector) of its top stack. Null without categories.
std::optional<FeatureValue> FoomFeature(const FoomReport& report);

}  // namespace heapgraph::report
