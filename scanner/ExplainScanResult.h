// scanner/: the explain request of a leak scan and what the scan found for it
// (scanner/ExplainScan): for each target block, one shortest chain from a root through the heap to
// it, or that it was not reachable. Plain data.
#pragma once

#include <cstdint>
#include <vector>

#include "heap/store/PersistedFormat.h"
#include "scanner/TypedScanResult.h"

namespace heapgraph::scanner {

// The blocks to explain. Targets are numbered: the addresses first (target i: the live block
// containing addresses[i]), then the functions (target addresses.size() + f: the live blocks
// whose allocation stack has a return address in one of function f's code ranges).
struct ExplainRequest {
  static constexpr uint32_t kMaxPerFunction = 10;  // blocks explained per function target
  static constexpr uint32_t kMaxFunctions = 64;

  struct CodeRange {
    uint64_t begin = 0;  // runtime addresses of one function's code, [begin, end)
    uint64_t end = 0;
    uint32_t function = 0;  // index of the function target (0 = the first function)
  };

  std::vector<uint64_t> addresses;
  uint32_t functions = 0;  // at most kMaxFunctions
  std::vector<CodeRange> code;

  bool empty() const { return addresses.empty() && functions == 0; }
  uint32_t targets() const { return static_cast<uint32_t>(addresses.size()) + functions; }
};

// One block of a chain: the root's block first, the explained block last.
struct ExplainStep {
  uint64_t address = 0;
  uint64_t size = 0;
  uint32_t offset = 0;  // byte offset, in the previous block, of the word pointing here (first: 0)
  uint32_t stack = 0;   // allocation stack id
  format::AllocFunction function = format::AllocFunction::kNone;
  uint8_t reserved[7] = {};
};

struct ExplainChain {
  uint32_t target = 0;   // the request's target
  bool leaked = false;   // not reachable: a leak (steps holds only the block)
  bool reached = false;  // reachable and a chain was found (root and steps are set)
  RootOrigin root;
  std::vector<ExplainStep> steps;
};

struct ExplainScanResult {
  bool enabled = false;  // the scan had targets and its snapshot explained them
  // Per target: the live blocks it matched (an address: 0 or 1; a function: all, of which at most
  // kMaxPerFunction have a chain).
  std::vector<uint64_t> matched;
  std::vector<ExplainChain> chains;  // by target, then block address
};

}  // namespace heapgraph::scanner
