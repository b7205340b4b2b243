// report/: why blocks are reachable ("explain"), as a leak report shows it. The targets a user
// gives (an address: the live block containing it; a function name: live blocks allocated under
// it), the scan request made of them (function names resolved to their code through the loaded
// modules' symbol tables), and, from the scan's chains (scanner/ExplainScan), one Explanation per
// target: for each of its blocks, the root described as Valgrind's who_points_at and Xcode's
// memory graph do (thread N's stack in the frame of F at sp+off, register R of thread N, global
// symbol+off of module M, TLS of thread N, anonymous mapping [a-b]) and each block of the chain
// (address, size, type, top allocation frames, the offset of the word pointing to the next), or
// that the block is not reachable because it was reported as a leak. LeakReportText and
// LeakReportJson format it (docs/report-format.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/LeakGraph.h"
#include "report/Symbolizer.h"
#include "scanner/ExplainScanResult.h"
#include "scanner/ScanResult.h"
#include "scanner/types/ModuleSegments.h"

namespace heapgraph::report {

class StackResolver;

struct ExplainTarget {
  std::string text;  // as given
  bool is_address = false;
  uint64_t address = 0;
};

// The '/'-separated list of targets ("0x7f00a000/MakeCache"): an item that is "0x" and hex digits
// is an address, any other non-empty item a function name. Throws std::invalid_argument (one
// line) on more than scanner::ExplainRequest::kMaxFunctions function names.
std::vector<ExplainTarget> ParseExplainTargets(std::string_view list);

// The scan's request: the addresses, and each function's code ranges in every module of
// `modules` (runtime addresses). A function found nowhere keeps its target with no range.
scanner::ExplainRequest MakeExplainRequest(const std::vector<ExplainTarget>& targets,
                                           const scanner::types::ModuleSegments& modules,
                                           Symbolizer& symbolizer);

struct ExplainRoot {
  // "stack", "registers", "global", "tls", "mapping" (private anonymous memory), "other".
  std::string kind;
  int thread = 0;              // tid: stack, registers, tls
  uint64_t address = 0;        // the root word; 0 for a register
  std::string register_name;   // registers: "rax", ...
  uint64_t stack_offset = 0;   // stack: the word's offset above the thread's stack pointer
  std::string function;        // stack: the function whose frame holds the word ("" unknown)
  std::string module;          // global: the module's path
  std::string symbol;          // global: the symbol holding the word ("" unknown)
  uint64_t symbol_offset = 0;  // global: the word's offset in it
  uint64_t region_begin = 0;   // the mapping holding the word ([0, 0) unknown)
  uint64_t region_end = 0;
};

struct ExplainHop {
  uint64_t address = 0;
  uint64_t size = 0;
  uint32_t offset = 0;  // byte offset of the word pointing to the next block (the last: 0)
  std::string type;     // a reader's type name, else the size category
  std::vector<std::string> stack;  // allocation stack, top kMaxFrames frames: "F file:line"
};

struct ExplainedBlock {
  static constexpr size_t kMaxFrames = 3;

  uint64_t address = 0;
  // "reachable" (root and chain), "leaked" (reported: leak_kind), "no-path" (marked reachable but
  // the search found no chain; should not happen).
  std::string status;
  std::string leak_kind;            // leaked: "direct" or "indirect"
  std::optional<ExplainRoot> root;  // reachable
  std::vector<ExplainHop> chain;    // the root's block first, this block last; leaked: this one
};

struct Explanation {
  std::string target;  // as given
  bool function = false;
  uint64_t matched = 0;  // live blocks the target matched (a function: beyond those listed)
  std::vector<ExplainedBlock> blocks;
};

// One line phrase of a root: "stack of thread 12 in the frame of Worker at sp+0x40", ...
std::string DescribeRoot(const ExplainRoot& root);

// The scan's chains, described. `types`: per typed object of scan.typed (may be empty).
std::vector<Explanation> BuildExplanations(const std::vector<ExplainTarget>& targets,
                                           const scanner::ScanResult& scan,
                                           const graph::LeakGraph& graph, StackResolver& stacks,
                                           Symbolizer& symbolizer,
                                           const scanner::types::ModuleSegments& modules,
                                           const std::vector<std::string>& types);

}  // namespace heapgraph::report
