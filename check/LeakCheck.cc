#include "check/LeakCheck.h"

#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "check/ChangedStacks.h"
#include "check/CheckSuppressions.h"
#include "check/FreshStack.h"
#include "check/HtmlPageWriter.h"
#include "check/LeakPreview.h"
#include "check/ReaderCache.h"
#include "check/ReportFile.h"
#include "check/SideThread.h"
#include "graph/LeakGraph.h"
#include "heap/platform/StackScrub.h"
#include "heap/plugin/ExclusiveCheck.h"
#include "heap/plugin/RecorderEntries.h"
#include "heap/plugin/RecordingIgnored.h"
#include "heap/plugin/ScanInterface.h"
#include "heapgraph/heapgraph.h"
#include "reader/RecordingReader.h"
#include "report/Explanation.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"
#include "report/StackResolver.h"
#include "report/SymbolWarmup.h"
#include "report/TypedAnalysis.h"
#include "scanner/LeakScan.h"
#include "scanner/SeqWindow.h"
#include "scanner/types/ModuleSegments.h"

namespace heapgraph::report {
namespace {

// Below this many records the text takes less time than starting a thread (≈ 6 µs per record).
constexpr size_t kParallelTextRecords = 1000;

// The symbol warm-up overlaps the snapshot's marking; a heap under 1 MiB is marked in about a
// millisecond, so warming it would only add the symbolizer's first load to a check that finds no
// leak (a short-lived process's check at exit: 40-50 ms of its ≈ 60, docs/performance.md).
constexpr uint64_t kWarmupMinLiveBytes = uint64_t{1} << 20;
// A one-shot check of a heap this small scans in place (ScanOptions::in_place_max_live_blocks
// and _bytes): a check of a short program at exit took 2-2.5 ms so against 5-7.5 ms with a
// snapshot process (cmake --version: 700 blocks, 180 KB; issue 14). The world stays stopped while
// the blocks are marked: 2.1 ms at 2,000 blocks, 2.9 at 5,000, 4.1 at 10,000, 12 at 40,000,
// against 1-4 ms with a snapshot process at every size (bench/leak_workload.cc bigheap).
constexpr uint64_t kInPlaceMaxLiveBlocks = 4096;
constexpr uint64_t kInPlaceMaxLiveBytes = uint64_t{4} << 20;

int AvailableCpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

void PrintLine(const std::string& line) {
  std::fprintf(stderr, "heapgraph: %s\n", line.c_str());
}

constexpr char kAlreadyChecking[] =
    "a leak check is already running on this thread (started from inside a check)";

LeakReport Failed(std::string error) {
  LeakReport report;
  report.ok = false;
  report.error = std::move(error);
  return report;
}

// The explain targets of a check, resolved into the scan's request before the scan (function
// names through the loaded modules' symbol tables), and the chains the scan found, described.
// Without targets nothing is done or allocated.
class ExplainPreparation {
 public:
  ExplainPreparation(const std::string& list, Symbolizer& symbolizer,
                     scanner::ScanOptions* options) {
    if (list.empty()) return;
    try {
      targets_ = ParseExplainTargets(list);
    } catch (const std::invalid_argument& e) {
      PrintLine(std::string("leak_explain: ") + e.what() + "; nothing is explained");
      return;
    }
    if (targets_.empty()) return;
    modules_.Collect();
    options->explain = MakeExplainRequest(targets_, modules_, symbolizer);
  }

  void AddTo(LeakReport& report, const scanner::ScanResult& scan, const graph::LeakGraph& graph,
             const RecordingReader& reader, Symbolizer& symbolizer,
             const TypedAnalysis& typed) const {
    if (targets_.empty()) return;
    if (!scan.explained.enabled) {
      report.warnings.push_back("the explain targets could not be explained (see the note)");
      return;
    }
    StackResolver stacks(reader, symbolizer);
    report.explanations =
        BuildExplanations(targets_, scan, graph, stacks, symbolizer, modules_, typed.names());
  }

 private:
  std::vector<ExplainTarget> targets_;
  scanner::types::ModuleSegments modules_;
};

// What the checks of this process keep from one to the next (they run one at a time, under the
// check lock): the Symbolizer's memo (its files are closed after each check) and the prepared type
// readers. Never freed: a check may run at exit, after static destructors.
struct CheckReuse {
  Symbolizer symbolizer;
  ReaderCache readers{/*field_layouts=*/true};
};

CheckReuse& Reuse() {
  static CheckReuse* reuse = new CheckReuse;
  return *reuse;
}

// Closes the shared Symbolizer's files when the check ends, however it ends: no descriptor of the
// check's stays open in the program between checks.
struct CloseSymbolFiles {
  ~CloseSymbolFiles() { Reuse().symbolizer.CloseFiles(); }
};

constexpr char kChangedName[] = "(changed)";

// The sequence window of a delta check, read from the recorder before the scan; none for a full
// check, or (after one line) when the checkpoint was never set.
std::optional<scanner::SeqWindow> ResolveWindow(const LeakCheckOptions& options) {
  using Window = LeakCheckOptions::Window;
  if (options.window == Window::kAll) return std::nullopt;
  HeapgraphSequenceFn sequence = RecorderEntries::Get().sequence;
  scanner::SeqWindow window;
  if (sequence == nullptr || sequence(nullptr, &window.to_seq) != 0) return std::nullopt;
  if (options.window == Window::kChanged) {
    window.checkpoint = kChangedName;
    window.from_seq = 0;
    return window;
  }
  window.checkpoint = options.checkpoint;
  if (sequence(options.checkpoint.c_str(), &window.from_seq) != 0) {
    PrintLine("checkpoint \"" + options.checkpoint +
              "\" was never set (heapgraph_checkpoint); the check covers every block");
    return std::nullopt;
  }
  return window;
}

// Limits `scan`'s leaked blocks to the window's; returns how many are left.
size_t LimitLeaked(scanner::ScanResult& scan, const scanner::SeqWindow& window) {
  if (window.checkpoint == kChangedName) {
    return scanner::KeepLeaked(scan, ChangedStacks::Process().Grown(scan.leaked));
  }
  return scanner::LimitToWindow(scan, window);
}

// The report of a delta check whose window has no leak: the counts, no symbolization.
LeakReport EmptyWindowReport(const scanner::ScanResult& scan, const scanner::SeqWindow& window) {
  LeakReport report;
  report.summary.live_blocks = scan.stats.live_blocks;
  report.timings = scan.timings;
  report.stats = scan.stats;
  report.recording_dir = scan.recording_dir;
  report.window = window;
  return report;
}

// The report of a full check when the recorder holds no live block: nothing can have leaked,
// so no thread is stopped and nothing is scanned (a short program's check at exit: /bin/true
// allocates nothing). Written like any other report.
LeakReport EmptyHeapReport(const LeakCheckOptions& options, const scanner::ScanResult& unscanned,
                           std::chrono::steady_clock::time_point began) {
  LeakReport report;
  report.stats = unscanned.stats;
  report.recording_dir = unscanned.recording_dir;
  ApplySuppressions(LoadCheckSuppressions(unscanned.suppressions), report);  // a bad file fails
  report.timings.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  WriteLeakReportFiles(options, report);
  return report;
}

// Runs on the fresh stack.
LeakReport CheckOnThisStack(const LeakCheckOptions& options, uint64_t program_stack_pointer) {
  try {
    const auto began = std::chrono::steady_clock::now();
    std::optional<scanner::SeqWindow> window = ResolveWindow(options);
    // No live block (allocated in the window): none can have leaked, no scan. A full check with
    // blocks to explain still scans, to say that none is there.
    scanner::ScanOptions scan_options;
    if (window ? window->checkpoint != kChangedName : options.explain.empty()) {
      scanner::ScanResult unscanned;
      const int64_t inside = scanner::LiveBlocksInWindow(window ? &*window : nullptr, &unscanned);
      if (inside == 0) {
        return window ? EmptyWindowReport(unscanned, *window)
                      : EmptyHeapReport(options, unscanned, began);
      }
      if (inside > 0) {  // the scan need not glance at the recorder again
        scan_options.heap_totals =
            scanner::HeapTotals{unscanned.stats.live_blocks, unscanned.stats.live_bytes};
      }
    }
    scan_options.interior_pointers = options.interior_pointers;
    scan_options.program_stack_pointer = program_stack_pointer;
    // A delta check does not type: preparing the type readers was most of a small heap's check
    // (docs/performance.md); its reports name blocks by size category and find no typed cycles.
    scan_options.types = !window;
    if (scan_options.types) scan_options.prepared_readers = Reuse().readers.Get();
    scan_options.types_only_if_leaked = options.repeated;
    scan_options.hold_allocations_while_marking = options.repeated;
    scan_options.in_stopped_world = options.repeated;
    scan_options.process_exits = options.process_exits;
    scan_options.in_place_max_live_blocks = kInPlaceMaxLiveBlocks;
    scan_options.in_place_max_live_bytes = kInPlaceMaxLiveBytes;
    CloseSymbolFiles close_files;
    SymbolWarmup warmup(Reuse().symbolizer);  // nothing allocated before the snapshot
    // A delta check symbolizes only when its window leaked (usually nothing: a test's check).
    if (SymbolizesWhileMarking() && !window) {
      scan_options.while_marking = [&warmup](const scanner::ScanResult& so_far,
                                             const std::function<bool()>& marking_done) {
        warmup.symbolizer().ShareResults(so_far.symbol_cache);
        warmup.Run(so_far.recording_dir, marking_done);
      };
      scan_options.while_marking_min_live_bytes = kWarmupMinLiveBytes;
    }
    ExplainPreparation explain(options.explain, warmup.symbolizer(), &scan_options);
    scanner::ScanResult scan = scanner::RunLeakScan(scan_options);
    if (!scan.notice.empty()) PrintLine(scan.notice);
    if (!scan.ok) return Failed(scan.error);
    if (window && LimitLeaked(scan, *window) == 0) return EmptyWindowReport(scan, *window);
    graph::LeakGraph graph(scan.leaked, scan.edges);  // reads scan.leaked in place
    const RecordingReader& reader = warmup.Reader(scan.recording_dir, scan.recording_files);
    Symbolizer& symbolizer = warmup.symbolizer();
    symbolizer.ShareResults(scan.symbol_cache);
    TypedAnalysis typed(scan, symbolizer);
    LeakReport report = BuildLeakReport(scan, graph, reader, symbolizer, &typed.leaked_types(),
                                        &typed.leaked_self_owners());
    typed.AddTo(report);
    explain.AddTo(report, scan, graph, reader, symbolizer, typed);
    ApplySuppressions(LoadCheckSuppressions(scan.suppressions), report);
    if (scan.preview_bytes != 0) AddLeakPreviews(report, scan.preview_bytes);
    report.window = window;
    LeakCheckOptions written = options;
    if (written.max_text_records == 0) written.max_text_records = scan.max_leaks;
    written.categories = written.categories || scan.categories;
    WriteLeakReportFiles(written, report);
    return report;
  } catch (const std::exception& e) {
    return Failed(std::string("the report could not be built: ") + e.what());
  }
}

struct FreshStackCall {
  const LeakCheckOptions* options;
  uint64_t program_stack_pointer;
  LeakReport report;
};

// RunLeakCheckFrom, for a caller that holds an ExclusiveCheck.
LeakReport RunExclusiveLeakCheck(const LeakCheckOptions& options, uint64_t program_stack_pointer);

}  // namespace

TextReportOptions LeakCheckTextOptions(const LeakCheckOptions& options, bool json_written) {
  TextReportOptions text;
  text.max_records = options.max_text_records;
  text.categories = options.categories;
  if (json_written && !options.json_path.empty() && options.json_path != "-") {
    text.full_report = options.json_path;
  }
  return text;
}

// The page of option leak_html: rendered from the JSON text by libheapgraph_html.so. A page
// that cannot be written is a warning and one line on stderr; the check's verdict stands.
void WriteLeakReportPage(const LeakCheckOptions& options, const std::string& json_text,
                         bool json_saved, LeakReport& report) {
  std::string error;
  std::string json_path = json_saved && options.json_path != "-" ? options.json_path : "";
  if (HtmlPageWriter::Write(json_text, json_path, options.html_path, &error)) return;
  report.warnings.push_back(error);
  PrintLine(error);
}

void WriteLeakReportFiles(const LeakCheckOptions& options, LeakReport& report) {
  const bool json = !options.json_path.empty(), text = !options.text_path.empty();
  const bool html = !options.html_path.empty();
  std::string text_error;
  bool text_ok = true;
  TextReportOptions text_options = LeakCheckTextOptions(options, /*json_written=*/true);
  const bool quiet =
      options.quiet_when_clean && options.text_path == "-" && SaysOnlyNoLeaks(report, text_options);
  auto write_text = [&] {
    if (quiet) return;
    text_ok = ReportFile::Write(options.text_path, FormatLeakReportText(report, text_options),
                                &text_error);
  };
  SideThread text_writer;
  if (json && text && options.json_path != "-" && options.text_path != "-" &&
      report.leaks.size() >= kParallelTextRecords && AvailableCpus() >= 2) {
    text_writer.Start(write_text);  // when it cannot start, the text is written below
  }
  std::string json_error;
  std::string json_text = json || html ? LeakReportJsonText(report) + "\n" : std::string();
  bool json_ok = !json || ReportFile::Write(options.json_path, json_text, &json_error);
  if (html) WriteLeakReportPage(options, json_text, json && json_ok, report);
  bool text_written = text_writer.running();
  text_writer.Join();
  if (text_writer.error()) std::rethrow_exception(text_writer.error());
  if (!json_ok) report.warnings.push_back(json_error);
  if (!json_ok) text_options = LeakCheckTextOptions(options, /*json_written=*/false);
  if (text && (!text_written || !json_ok)) write_text();
  if (!text_ok) report.warnings.push_back(text_error);
  // One line on stderr for each report not written, unless the text report on stderr listed it.
  if (!json_ok && (!text || options.text_path != "-" || !text_ok)) PrintLine(json_error);
  if (!text_ok) PrintLine(text_error);
}

bool SymbolizesWhileMarking() {
  return AvailableCpus() >= 2;
}

LeakReport RunLeakCheckFrom(const LeakCheckOptions& options, uint64_t program_stack_pointer) {
  RecordingIgnored ignored(RecorderEntries::Get().ignore_thread);  // the check is not the program
  // Waits for a check running on another thread.
  ExclusiveCheck exclusive(RecorderEntries::Get(), program_stack_pointer);
  if (exclusive.refused()) return Failed(kAlreadyChecking);
  return RunExclusiveLeakCheck(options, program_stack_pointer);
}

__attribute__((noinline)) LeakReport RunLeakCheck(const LeakCheckOptions& options) {
  return RunLeakCheckFrom(options, reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16);
}

namespace {

LeakReport RunExclusiveLeakCheck(const LeakCheckOptions& options, uint64_t program_stack_pointer) {
  FreshStackCall call{&options, program_stack_pointer, {}};
  bool ran = FreshStack::Run(
      [](void* argument) {
        auto* c = static_cast<FreshStackCall*>(argument);
        c->report = CheckOnThisStack(*c->options, c->program_stack_pointer);
      },
      &call, FreshStack::kDefaultSize, options.process_exits);
  if (!ran) call.report = CheckOnThisStack(options, 0);
  return std::move(call.report);
}

}  // namespace

}  // namespace heapgraph::report

namespace {

// Fills `summary` (may be null) from `report`; returns the C API's result: leaked blocks or -1.
int ReportToSummary(const heapgraph::report::LeakReport& report, heapgraph_leak_summary* summary) {
  if (summary != nullptr) {
    std::memset(summary, 0, sizeof(*summary));
    summary->ok = report.ok ? 1 : 0;
    summary->direct_blocks = report.summary.direct_blocks;
    summary->indirect_blocks = report.summary.indirect_blocks;
    summary->leaked_bytes = report.summary.leaked_bytes;
    summary->cycles = report.summary.cycles;
    summary->live_blocks = report.summary.live_blocks;
    summary->world_stopped_ms = report.timings.world_stopped_ms;
    summary->total_ms = report.timings.total_ms;
    summary->longest_allocation_wait_ms = report.timings.longest_allocation_wait_ms;
    std::snprintf(summary->error, sizeof(summary->error), "%s", report.error.c_str());
  }
  if (!report.ok) return -1;
  return static_cast<int>(report.summary.direct_blocks + report.summary.indirect_blocks);
}

}  // namespace

namespace {

// One check of the C API with `options`, from the program's frame `program_stack_pointer`.
int CheckFromC(const heapgraph::report::LeakCheckOptions& options, heapgraph_leak_summary* summary,
               uint64_t program_stack_pointer) {
  // Held until the report is freed and the stack scrubbed: a check on another thread never stops
  // this one amid the report's frees, whose hooks hold block addresses in registers and frames.
  heapgraph::ExclusiveCheck exclusive(heapgraph::RecorderEntries::Get(), program_stack_pointer);
  if (exclusive.refused()) {
    return ReportToSummary(heapgraph::report::Failed(heapgraph::report::kAlreadyChecking), summary);
  }
  int result = ReportToSummary(
      heapgraph::report::RunExclusiveLeakCheck(options, program_stack_pointer), summary);
  // The report's frees left block addresses on this stack: gone before the program's frames (or
  // the wait of its next check, which a concurrent check scans) are laid over them.
  heapgraph::ScrubStackBelow();
  return result;
}

// The recorder's entries are resolved (a function-local static: dlsym under a C++ init guard)
// while this library loads: libheapgraph.so loads it under ScanPlugin's lock, which fork() waits
// for, and a linked test build runs this before main. Resolved lazily by the first check instead,
// a fork() by another thread in the middle left the guard taken in the child, whose first check
// then waited forever (LeakCheckOverlapTest.ChildrenForkedDuringChecksAreExact hung in CI).
__attribute__((constructor)) void ResolveRecorderEntriesAtLoad() {
  heapgraph::RecorderEntries::Get();
}

}  // namespace

// The entry of libheapgraph.so's triggers and public check functions (heap/runtime/CheckApi.cc).
extern "C" HEAPGRAPH_API int heapgraph_internal_check_leaks(const HeapgraphCheckRequest* request) {
  using heapgraph::report::LeakCheckOptions;
  // Before the options' strings are allocated.
  heapgraph::RecordingIgnored ignored(heapgraph::RecorderEntries::Get().ignore_thread);
  LeakCheckOptions options;
  if (request->json_path != nullptr) options.json_path = request->json_path;
  if (request->text_path != nullptr) options.text_path = request->text_path;
  if (request->html_path != nullptr) options.html_path = request->html_path;
  options.interior_pointers = request->interior_pointers != 0;
  if (request->explain != nullptr) options.explain = request->explain;
  if (request->window == HEAPGRAPH_WINDOW_SINCE) {
    options.window = LeakCheckOptions::Window::kSince;
    options.checkpoint = request->checkpoint != nullptr ? request->checkpoint : "";
  } else if (request->window == HEAPGRAPH_WINDOW_CHANGED) {
    options.window = LeakCheckOptions::Window::kChanged;
  }
  options.repeated = request->repeated != 0;
  options.quiet_when_clean = request->quiet_when_clean != 0;
  options.process_exits = request->process_exits != 0;
  return CheckFromC(options, request->summary, request->program_stack_pointer);
}
