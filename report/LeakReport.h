// report/: the leak report model and its builder. A LeakReport is what one leak scan means to a
// reader: leak records grouped by (kind, allocation stack) with symbolized stacks, every leaked
// cycle exactly once, totals and scan statistics. LeakReportText.h and LeakReportJson.h format it;
// docs/report-format.md documents the JSON form.
//
// Unlike LeakSanitizer (every member of a leaked cycle is "indirect", so a cycle shows no direct
// leak at all), libmemunreachable (one entry per cycle member) and Valgrind (an arbitrary leader),
// every leaked cycle that nothing else references yields exactly one direct leak, its earliest
// allocated member (graph/LeakGraph.h), and is listed once as a cycle naming that member.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/LeakGraph.h"
#include "reader/RecordingReader.h"
#include "report/Explanation.h"
#include "report/FrameList.h"
#include "report/ReportFrame.h"
#include "report/Suppressions.h"
#include "report/Symbolizer.h"
#include "scanner/ScanResult.h"
#include "scanner/SeqWindow.h"

namespace heapgraph::report {

enum class LeakKind { kDirect, kIndirect };

// "direct" or "indirect".
const char* LeakKindName(LeakKind kind);

// Leaked blocks that share a kind and an allocation stack.
struct LeakRecord {
  LeakKind kind = LeakKind::kDirect;
  uint32_t stack_id = 0;           // 0: no stack was captured (then `stack` is empty)
  uint64_t size = 0;               // bytes of all `count` blocks
  uint64_t count = 0;              // >= 1
  uint64_t block_size = 0;         // every block's size when all are equal, else 0
  uint64_t retained_bytes = 0;     // direct: sum of the blocks' dominator subtrees; indirect: 0
  std::string type;                // shared type, else "A, B, C" (", ..." appended if more)
  FrameList stack;                 // innermost first, inline chains flattened
  std::vector<uint64_t> examples;  // the lowest block addresses, at most kMaxExamples, ascending
  // The pattern of the suppression rule that matched the stack (report/Suppressions.h), or
  // empty. A suppressed record stays in the report but counts in no leak total.
  std::string suppressed;
  // The first bytes of examples[0] as lower-case hex, two digits a byte: only when the check was
  // asked for them (option leak_preview); empty otherwise. Heap contents are never in a report
  // unless asked.
  std::string preview;
};

// One suppression rule that matched, as LeakSanitizer's "Suppressions used" lists it.
struct SuppressionUse {
  std::string rule;    // the pattern
  uint64_t count = 0;  // blocks of the records it suppressed
  uint64_t bytes = 0;
};

struct CycleMember {
  static constexpr size_t kNoRecord = SIZE_MAX;

  uint64_t address = 0;
  uint64_t size = 0;
  std::string type;
  uint32_t stack_id = 0;
  size_t record = 0;  // index into LeakReport::leaks of the record that holds this block, or
                      // kNoRecord for a member of a reachable cycle
  // Typed cycles: the member's owning field on the cycle's path (its name, else "+<offset>");
  // empty for members off the path and in conservative cycles.
  std::string field;
};

// One block on a reachable cycle's retention path.
struct RetentionStep {
  uint64_t address = 0;
  uint64_t size = 0;
  std::string type;
  std::string field;  // the word of the previous step (or the root) that points here
};

// What keeps a reachable cycle alive: the root holding it and one path from there.
struct CycleRoot {
  std::string kind;                 // "global", "stack", "registers", "other"
  int thread = 0;                   // "stack" / "registers": the thread's tid
  std::string module;               // "global": the module's path
  uint64_t address = 0;             // the root word (0 for registers)
  std::vector<RetentionStep> path;  // the root's block first, a cycle member last
};

// One row of the categories table: the blocks of one type (a reader's type name, else the size
// category).
struct CategoryRow {
  std::string type;
  uint64_t live_count = 0;  // leaked blocks included
  uint64_t live_bytes = 0;
  uint64_t leaked_count = 0;
  uint64_t leaked_bytes = 0;
};

// A strongly connected component of leaked blocks with more than one member, or one typed object
// that owns itself (a typed self-capture; a block merely pointing into itself is no cycle). Each
// appears exactly once in LeakReport::cycles.
struct LeakCycle {
  // From the cycle's shape (graph/CycleKind): timer-target, delegate, block-self, function-self,
  // shared_ptr, generic.
  std::string kind = "generic";
  bool leaked = true;             // false: a retain cycle still reachable from a root (see `root`)
  bool typed = false;             // a retain cycle of owning references between typed objects
  std::optional<CycleRoot> root;  // reachable cycles only
  std::vector<CycleMember> members;  // address order
  // Leaked with a representative: the representative's retained bytes (the cycle and what only
  // it holds); otherwise the members' bytes.
  uint64_t retained_bytes = 0;
  // Index into `members` of the cycle's direct leak. Empty when another leaked block references
  // the cycle: then every member is indirect.
  std::optional<size_t> representative;
  // Without a representative: the address of the direct leak whose retained bytes include the
  // cycle (the nearest direct leak dominating it). Empty when the cycle has a representative, or
  // when several direct leaks reach it and none alone retains it.
  std::optional<uint64_t> retained_by;
  std::string representative_reason;  // "earliest allocated", else why there is none
  // A shortest closed walk along references: indices into `members`, starting at the
  // representative (else at the earliest allocated member) and ending with a member that
  // references it. Members not on it are still in the component.
  std::vector<size_t> path;
};

// Suppressed records count only in suppressed_blocks and suppressed_bytes.
struct LeakSummary {
  uint64_t direct_blocks = 0;
  uint64_t indirect_blocks = 0;
  uint64_t leaked_bytes = 0;  // direct_bytes + indirect_bytes
  uint64_t direct_bytes = 0;
  uint64_t indirect_bytes = 0;
  uint64_t cycles = 0;
  uint64_t live_blocks = 0;  // from the scan: every live block, leaked or not
  uint64_t live_bytes = 0;
  uint64_t suppressed_blocks = 0;
  uint64_t suppressed_bytes = 0;
};

struct LeakReport {
  static constexpr size_t kMaxExamples = 3;

  bool ok = true;      // false: the scan failed; only error, notice, timings, stats, dir are set
  std::string error;   // from ScanResult::error
  std::string notice;  // from ScanResult::notice: one line worth telling the user, or empty
  LeakSummary summary;
  std::vector<LeakRecord> leaks;        // size desc, count desc, direct first, stack id asc
  std::vector<LeakCycle> cycles;        // leaked first; then ListedBefore
  std::vector<CategoryRow> categories;  // live bytes desc; empty when the scan did not type
  scanner::ScanTimings timings;
  scanner::ScanStats stats;
  std::string recording_dir;
  std::vector<std::string> warnings;  // stacks that could not be read, one line each
  // Why the check's explain targets are reachable (report/Explanation.h); empty without targets.
  std::vector<Explanation> explanations;
  // The rules that suppressed records, in the order of their first use; empty without any.
  std::vector<SuppressionUse> suppressions_used;
  // A delta check's window (heapgraph_check_leaks_since / _changed): only blocks in it are leaks.
  std::optional<scanner::SeqWindow> window;
};

// The bytes of a cycle's members.
uint64_t MemberBytes(const LeakCycle& cycle);
// The order of cycles within the leaked ones and within the reachable ones: retained bytes desc,
// then member bytes desc, then lowest first member address.
bool ListedBefore(const LeakCycle& a, const LeakCycle& b);

// Builds the report of one scan. `graph` must have been built from `result.leaked` (vertex i is
// result.leaked[i], with sequence = seq) and `result.edges`; `reader` reads
// result.recording_dir. Each distinct stack is read and symbolized once. A stack the recording
// cannot produce is reported empty with a warning. Never throws for a bad stack; throws only on
// allocation failure.
// `types`, if given, names leaked block v's type (a reader's name; empty: the size category).
// `self_owners`, if given, lists leaked blocks that own themselves through a typed owning
// reference (TypedAnalysis::leaked_self_owners()): each gets a cycle of one member, which the
// leak graph (where a self reference is no cycle) does not give.
LeakReport BuildLeakReport(const scanner::ScanResult& result, const graph::LeakGraph& graph,
                           const RecordingReader& reader, Symbolizer& symbolizer,
                           const std::vector<std::string>* types = nullptr,
                           const std::vector<uint32_t>* self_owners = nullptr);

// Marks each record of `report` whose stack a rule of `rules` matches (LeakRecord::suppressed),
// fills suppressions_used and recomputes the summary. A report that failed is left alone.
void ApplySuppressions(const Suppressions& rules, LeakReport& report);

}  // namespace heapgraph::report
