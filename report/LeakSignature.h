// report/: a leak record's signature, the identity of "the same leak" across runs, rebuilds and
// machines (baselines, `heapgraph diff`, SARIF fingerprints). It hashes only what survives them:
// the record's kind and, for every frame of its stack (innermost first, inline frames included),
// the demangled function name and the module's file name. Never addresses, offsets, build ids,
// source lines or sizes: they move with ASLR, rebuilds and edits. A frame without a function is
// "?" in its module, so two unsymbolized stacks through the same modules match. The value is 16
// lowercase hex digits of FNV-1a 64 over that canonical text (docs/report-format.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/FrameList.h"

namespace heapgraph::report {

struct SignatureFrame {
  std::string_view function;  // empty: not symbolized
  std::string_view module;    // file name, no directory; empty: no module
};

std::string LeakSignature(std::string_view kind, const std::vector<SignatureFrame>& frames);
// The same from a report's record fields: `kind` as LeakKindName() spells it.
std::string LeakSignature(std::string_view kind, const FrameList& stack);

}  // namespace heapgraph::report
