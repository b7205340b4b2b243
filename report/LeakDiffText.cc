#include "report/LeakDiffText.h"

#include <fmt/format.h>

namespace heapgraph::report {
namespace {

std::string Frames(const SignatureTotals& t) {
  std::string text;
  for (const std::string& f : t.where) text += (text.empty() ? "" : " < ") + f;
  return text.empty() ? "(no symbolized frame)" : text;
}

std::string Line(const char* what, const SignatureTotals& t) {
  return fmt::format("{:<5} {} {:<8} {} blocks, {} bytes: {}\n", what, t.signature, t.kind, t.count,
                     t.bytes, Frames(t));
}

}  // namespace

std::string FormatLeakDiff(const LeakDiff& diff) {
  std::string text = fmt::format(
      "leak diff: {} new leak signature{}, {} gone, {} grew, {} unchanged\n", diff.added.size(),
      diff.added.size() == 1 ? "" : "s", diff.removed.size(), diff.grew.size(), diff.unchanged);
  for (const SignatureTotals& t : diff.added) text += Line("new", t);
  for (const Growth& g : diff.grew) {
    text += fmt::format("{:<5} {} {:<8} {} -> {} blocks, {} -> {} bytes: {}\n", "grew",
                        g.after.signature, g.after.kind, g.before.count, g.after.count,
                        g.before.bytes, g.after.bytes, Frames(g.after));
  }
  for (const SignatureTotals& t : diff.removed) text += Line("gone", t);
  return text;
}

}  // namespace heapgraph::report
