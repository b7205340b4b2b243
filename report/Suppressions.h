// report/: LeakSanitizer's suppression rules: parsed from the text of a suppressions file (one rule
// a line, "leak:<pattern>"; '#' starts a comment line; blank lines and surrounding blanks are
// ignored) and matched against a leak's symbolized frames. A pattern matches a frame when it
// matches the frame's function name, its module's path or its source file: as a substring, with
// '*' matching any run of characters, a leading '^' anchoring at the start and a trailing '$' at
// the end (compiler-rt's TemplateMatch; a '$' elsewhere is an ordinary character). As in
// LeakSanitizer, frames are tried innermost first, and for a frame the first rule (in the order
// the rules were added) matching its module path, function or file wins. A line that is no rule
// (another type than "leak", no ':', an empty pattern, a NUL byte, more than kMaxLineBytes) is
// never fatal: it is skipped and described in problems(), one line each, so the caller prints them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/FrameList.h"

namespace heapgraph::report {

class Suppressions {
 public:
  static constexpr size_t kMaxLineBytes = 4096;
  static constexpr size_t kMaxProblems = 20;  // further bad lines are counted in the last one

  // Adds the rules of `text`; `source` names it in problems ("FILE",
  // "__lsan_default_suppressions").
  void Parse(std::string_view text, const std::string& source);
  // Reads `path` (at most 16 MiB, a regular file) and parses it; false, with one problem, when it
  // cannot be read.
  bool ParseFile(const std::string& path);

  // The pattern of the rule matching `stack` (above), or null.
  const std::string* Match(const FrameList& stack) const;
  // TemplateMatch: does `pattern` match `text`?
  static bool PatternMatches(std::string_view pattern, std::string_view text);

  bool empty() const { return patterns_.empty(); }
  const std::vector<std::string>& patterns() const { return patterns_; }
  // Why lines were skipped ("heapgraph: " is not included), in order.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void Problem(std::string line);

  std::vector<std::string> patterns_;
  std::vector<std::string> problems_;
  size_t dropped_problems_ = 0;
};

}  // namespace heapgraph::report
