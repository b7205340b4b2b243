// report/: the terminal form of a LeakReport. It starts with one screen that says what matters
// (the top direct leaks by retained bytes with their first application frames, the cycles, where
// the full report is), then the records worded like LeakSanitizer's so that people (and scripts)
// used to it can read them: a direct record with its whole stack; an indirect one (retained by a
// direct leak, which is the thing to fix) on two lines, its first application frame, unless asked
// for in full; then the leaked cycles as reference paths, the categories table when asked, and a
// SUMMARY line and a scan statistics line. The JSON report keeps every stack and block.
#pragma once

#include <cstddef>
#include <string>

#include "report/LeakReport.h"

namespace heapgraph::report {

struct TextReportOptions {
  // Records printed, largest first; 0 prints all. Records past the limit are never dropped
  // silently: one line counts them and their bytes and points to the JSON report, which has all.
  size_t max_records = 0;
  // Cycles printed; 0 prints all. The rest are counted the same way.
  size_t max_cycles = 0;
  // Blocks of one cycle path printed before the middle is elided ("-> ... (N more) ->"); 0 prints
  // every block. Every block is still in the leak records.
  size_t max_path_blocks = 12;
  // Rows of the categories table printed (largest live bytes first); rows with leaked blocks are
  // always printed. 0 prints all.
  size_t max_categories = 20;
  // The categories table (blocks by type, live and leaked) is printed only when asked.
  bool categories = false;
  // Indirect records with their whole stack, as LeakSanitizer prints them.
  bool full_indirect_stacks = false;
  // Direct leaks listed in the opening summary, largest retained first.
  size_t summary_leaks = 5;
  // Where the full (JSON) report was written, named in the summary; empty: not named.
  std::string full_report = "";
};

// A typed cycle's path by type and owning field, canonical member first:
// "ChatSession._onMessage -> std::function<lambda in ChatSession::start()>.session -> ChatSession".
std::string FormatTypedPath(const LeakCycle& cycle);

// The whole report, newline-terminated lines.
std::string FormatLeakReportText(const LeakReport& report, const TextReportOptions& options = {});

// True when the text would say only that nothing leaked (and the scan's statistics): a check that
// ran, no leak left after suppressions, no cycle (leaked or still reachable), no suppression used,
// no warning or notice, no explanation, no categories table asked. LeakSanitizer prints nothing
// then; heapgraph's at-exit and LeakSanitizer-API checks stay silent on stderr too.
bool SaysOnlyNoLeaks(const LeakReport& report, const TextReportOptions& options = {});

// One cycle path: "0x1000 (48 B, Malloc 48 B, alloc at f() a.cc:3) -> 0x2000 (...) -> 0x1000".
// Each block on the path is described once; the closing address repeats the first block.
std::string FormatCyclePath(const LeakReport& report, const LeakCycle& cycle,
                            size_t max_path_blocks = 0);

}  // namespace heapgraph::report
