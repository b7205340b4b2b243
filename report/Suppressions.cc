#include "report/Suppressions.h"

#include <fmt/format.h>

#include <exception>
#include <optional>

#include "reader/InputFile.h"

namespace heapgraph::report {
namespace {

constexpr uint64_t kMaxFileBytes = 16u << 20;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// At most 60 bytes of `s`, with bytes outside printable ASCII as '?': a problem line must stay
// one short line whatever the file holds.
std::string Quoted(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 60; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return s.size() > 60 ? out + "..." : out;
}

// Why `line` (trimmed, not a comment) is no rule, or nullopt; sets `pattern` when it is one.
std::optional<std::string> RuleProblem(std::string_view line, std::string_view* pattern) {
  if (line.size() > Suppressions::kMaxLineBytes) {
    return fmt::format("line longer than {} bytes", Suppressions::kMaxLineBytes);
  }
  if (line.find('\0') != std::string_view::npos) return "a NUL byte (binary data?)";
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return fmt::format("'{}' is not <type>:<pattern>", Quoted(line));
  }
  std::string_view type = Trim(line.substr(0, colon));
  if (type != "leak") {
    return fmt::format("suppression type '{}' is not supported (only 'leak')", Quoted(type));
  }
  *pattern = Trim(line.substr(colon + 1));
  if (pattern->empty() || *pattern == "^" || *pattern == "$" || *pattern == "^$") {
    return "empty pattern";
  }
  return std::nullopt;
}

// Where `segment` occurs in `text` at or after `from` (anchored: exactly at `from`).
size_t FindSegment(std::string_view text, std::string_view segment, size_t from, bool anchored) {
  if (anchored) return text.substr(from).starts_with(segment) ? from : std::string_view::npos;
  return text.find(segment, from);
}

}  // namespace

// The last slot becomes a count once more than kMaxProblems lines are bad (it counts its own).
void Suppressions::Problem(std::string line) {
  if (dropped_problems_ == 0 && problems_.size() < kMaxProblems) {
    problems_.push_back(std::move(line));
    return;
  }
  dropped_problems_ += dropped_problems_ == 0 ? 2 : 1;
  problems_.back() = fmt::format("... and {} more bad suppression lines", dropped_problems_);
}

void Suppressions::Parse(std::string_view text, const std::string& source) {
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    std::string_view pattern;
    std::optional<std::string> problem = RuleProblem(line, &pattern);
    if (problem) {
      Problem(
          fmt::format("suppressions {}:{}: {}; line ignored", Quoted(source), number, *problem));
    } else {
      patterns_.emplace_back(pattern);
    }
  }
}

bool Suppressions::ParseFile(const std::string& path) {
  std::string text;
  try {
    std::optional<InputFile> file = InputFile::Open(path, path, InputFile::Links::kFollow);
    if (!file) {
      Problem(
          fmt::format("cannot read suppressions {}: no such file; no rules from it", Quoted(path)));
      return false;
    }
    text = file->ReadAll(kMaxFileBytes);
  } catch (const std::exception& e) {
    Problem(fmt::format("cannot read suppressions: {}; no rules from it", e.what()));
    return false;
  }
  Parse(text, path);
  return true;
}

// The pattern is cut at each '*' into segments, found left to right, each at the leftmost place
// after the previous one (enough for '*' alone): the first one at the start with '^', the last
// one at the end with '$'.
bool Suppressions::PatternMatches(std::string_view pattern, std::string_view text) {
  if (text.empty()) return false;
  bool at_start = pattern.starts_with('^');
  if (at_start) pattern.remove_prefix(1);
  bool at_end = pattern.ends_with('$');
  if (at_end) pattern.remove_suffix(1);
  size_t pos = 0;
  for (bool first = true;; first = false) {
    size_t star = pattern.find('*');
    std::string_view segment = pattern.substr(0, star);
    if (star == std::string_view::npos) {
      if (!at_end) return FindSegment(text, segment, pos, first && at_start) != std::string::npos;
      if (text.size() < pos + segment.size() || !text.ends_with(segment)) return false;
      return !(first && at_start) || text.size() == segment.size();
    }
    size_t found = FindSegment(text, segment, pos, first && at_start);
    if (found == std::string_view::npos) return false;
    pos = found + segment.size();
    pattern.remove_prefix(star + 1);
  }
}

const std::string* Suppressions::Match(const FrameList& stack) const {
  for (const ReportFrame& frame : stack) {
    for (const std::string& pattern : patterns_) {
      if (PatternMatches(pattern, frame.module_path) || PatternMatches(pattern, frame.function) ||
          PatternMatches(pattern, frame.file)) {
        return &pattern;
      }
    }
  }
  return nullptr;
}

}  // namespace heapgraph::report
