// tests/report: explanations for the formatting tests (ExplanationTextTest, ExplanationJsonTest):
// a block reached through a 96-byte Cache whose word at +0x10 points to it, and a leaked one.
#pragma once

#include <string>

#include "report/Explanation.h"

namespace heapgraph::report::samples {

// Block 0x2010 (112 B), reached from `root` through 0x1000 (96 B, Cache, at +0x10).
inline Explanation Reachable(std::string target, bool function, const ExplainRoot& root) {
  Explanation e{std::move(target), function, 1, {}};
  ExplainedBlock b;
  b.address = 0x2010;
  b.status = "reachable";
  b.root = root;
  b.chain.push_back({0x1000, 96, 0x10, "Cache", {"MakeCache app.cc:10", "main app.cc:20"}});
  b.chain.push_back({0x2010, 112, 0, "Malloc 112 B", {}});
  e.blocks.push_back(b);
  return e;
}

// Block 0x3000 (16 B), reported as a `kind` leak.
inline Explanation Leaked(std::string target, bool function, uint64_t matched,
                          const std::string& kind) {
  Explanation e{std::move(target), function, matched, {}};
  ExplainedBlock b;
  b.address = 0x3000;
  b.status = "leaked";
  b.leak_kind = kind;
  b.chain.push_back({0x3000, 16, 0, "Malloc 16 B", {}});
  e.blocks.push_back(b);
  return e;
}

}  // namespace heapgraph::report::samples
