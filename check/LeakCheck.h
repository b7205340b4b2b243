// check/: one complete leak check of the calling process: scan (scanner/LeakScan), leak graph
// (graph/LeakGraph), report (LeakReport) and the report files. The C++ form of the C API in
// report/heapgraph_leaks.h; what a debug menu, a GoogleTest leak test or the at-exit check calls.
#pragma once

#include <cstdint>
#include <string>

#include "report/LeakReport.h"
#include "report/LeakReportText.h"

namespace heapgraph::report {

struct LeakCheckOptions {
  std::string json_path;  // "" = none
  std::string text_path;  // "" = none, "-" = stderr
  std::string html_path;  // "" = none; the page (check/HtmlPageWriter), rendered from the JSON
  bool interior_pointers = true;
  // Blocks to explain (report/Explanation.h, ParseExplainTargets): '/'-separated addresses and
  // function names; "" = none, and nothing of the explanation runs.
  std::string explain;
  // Leak records the text report prints (the JSON has all); 0: the recorder's max_leaks option.
  size_t max_text_records = 0;
  // The text report ends with the categories table; also when the recorder's leak_categories is on.
  bool categories = false;
  // Which leaked blocks are candidates (marking is the same): every one, those allocated after
  // `checkpoint` (heapgraph_check_leaks_since), or those of stacks whose leaked count or bytes grew
  // since the previous changed check (check/ChangedStacks). A delta check symbolizes and writes
  // the files only when something in its window leaked; an unknown checkpoint is one line on
  // stderr and the check covers every block.
  enum class Window { kAll, kSince, kChanged };
  Window window = Window::kAll;
  std::string checkpoint;
  // A check the program makes again and again, while its other threads work (LeakSanitizer's
  // recoverable check): it types the blocks only when its marking found a leak (a clean one has no
  // type table and no reachable retain cycles), and allocations wait while the snapshot marks
  // (scanner::ScanOptions), as LeakSanitizer's stopped world does, rather than fault every page the
  // program writes meanwhile (copy-on-write).
  bool repeated = false;
  // A text report to stderr ("-") is left out when it would say only that nothing leaked
  // (report::SaysOnlyNoLeaks), as LeakSanitizer prints nothing then: the checks the recorder
  // starts itself (at exit, __lsan_do_*leak_check). Files are always written.
  bool quiet_when_clean = false;
  // The process ends after this check (the at-exit check): the check's stack and the scan's
  // buffers are not unmapped (scanner::ScanOptions::process_exits); the exit unmaps them at once.
  bool process_exits = false;
};

// Runs the check on a FreshStack; the calling thread's stack is scanned from the caller's frame
// up. Never throws; a failed check has report.ok == false and report.error set (one line).
// One check at a time in a process (heap/plugin/ExclusiveCheck): a check started while another
// runs waits for it; one started on a thread already inside a check fails at once.
LeakReport RunLeakCheck(const LeakCheckOptions& options);

// The same with the program's stack pointer given (the entry points use the caller's frame).
LeakReport RunLeakCheckFrom(const LeakCheckOptions& options, uint64_t program_stack_pointer);

// Whether the check symbolizes the recording's return addresses while the snapshot marks
// (report/SymbolWarmup through scanner::ScanOptions::while_marking): with two or more CPUs
// available to the process. On one CPU the warm-up can only compete with the snapshot. On two
// idle CPUs it shortens the check (manyleaks 2M 921 -> 822 ms, bigheap 1M 400 -> 377 ms); on two
// CPUs already busy with other work it did not (docs/performance.md).
bool SymbolizesWhileMarking();

// The text report's options of a check: `options.max_text_records`, and the JSON report's path
// named in the text's opening screen when it was written (not "-").
TextReportOptions LeakCheckTextOptions(const LeakCheckOptions& options, bool json_written);

// The check's last step: writes the files `options` requests ("-" = stderr) with
// check/ReportFile (0600, never through a symbolic link). Write errors become warnings of
// `report`, the JSON's first, and a text report lists a JSON write error; each error is also one
// line "heapgraph: cannot write <path>: <why>" on stderr, unless the text report on stderr has it.
// With both files requested (neither "-"), at least 1,000 records and two CPUs, the text is
// formatted and written on a SideThread while the calling thread writes the JSON; the files are
// those of the serial order. Throws what the formatters throw.
void WriteLeakReportFiles(const LeakCheckOptions& options, LeakReport& report);

}  // namespace heapgraph::report
