#include "report/ExplanationText.h"

#include <fmt/format.h>

#include <iterator>

namespace heapgraph::report {
namespace {

void AppendHop(std::string& out, const ExplainHop& hop, size_t number) {
  auto to = std::back_inserter(out);
  fmt::format_to(to, "    #{} {:#x} ({} bytes, {})", number, hop.address, hop.size, hop.type);
  if (!hop.stack.empty()) {
    fmt::format_to(to, " allocated at {}", hop.stack[0]);
    for (size_t i = 1; i < hop.stack.size(); ++i) fmt::format_to(to, " <- {}", hop.stack[i]);
  }
  out += '\n';
}

void AppendBlock(std::string& out, const ExplainedBlock& b) {
  auto to = std::back_inserter(out);
  if (b.status == "leaked") {
    fmt::format_to(to, "  {:#x}: not reachable: reported as {} leak\n", b.address,
                   b.leak_kind.empty() ? "a" : b.leak_kind);
    return;
  }
  if (b.status != "reachable" || !b.root) {
    fmt::format_to(to, "  {:#x}: reachable, but no chain from a root was found\n", b.address);
    return;
  }
  fmt::format_to(to, "  {:#x}: reachable from {}\n", b.address, DescribeRoot(*b.root));
  for (size_t i = 0; i < b.chain.size(); ++i) {
    AppendHop(out, b.chain[i], i);
    if (i + 1 < b.chain.size())
      fmt::format_to(to, "       at +{:#x} points to\n", b.chain[i].offset);
  }
}

}  // namespace

std::string FormatExplanations(const std::vector<Explanation>& explanations) {
  std::string out;
  auto to = std::back_inserter(out);
  for (const Explanation& e : explanations) {
    if (e.function) {
      fmt::format_to(to, "Why reachable: blocks allocated under {}: {} live", e.target, e.matched);
      if (e.matched > e.blocks.size()) fmt::format_to(to, ", the first {} shown", e.blocks.size());
      out += '\n';
    } else {
      fmt::format_to(to, "Why reachable: {}\n", e.target);
    }
    if (e.blocks.empty()) out += e.function ? "  no live block\n" : "  no live block contains it\n";
    for (const ExplainedBlock& b : e.blocks) AppendBlock(out, b);
    out += '\n';
  }
  return out;
}

}  // namespace heapgraph::report
