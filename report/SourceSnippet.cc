#include "report/SourceSnippet.h"

#include <algorithm>
#include <filesystem>

#include "reader/InputFile.h"
#include "reader/RecordingError.h"

namespace heapgraph::report {
namespace {

std::optional<std::string> ReadSource(const std::string& path) {
  try {
    std::optional<InputFile> file = InputFile::Open(path, path, InputFile::Links::kFollow);
    if (!file || file->size() > SourceSnippet::kMaxSourceSize) return std::nullopt;
    return file->ReadAll(SourceSnippet::kMaxSourceSize);
  } catch (const RecordingError&) {
    return std::nullopt;
  }
}

// Where to look: the path itself, then each source directory joined with the path and with its
// trailing components ("../../src/a.cc" under DIR: DIR/../../src/a.cc, DIR/src/a.cc, DIR/a.cc).
std::vector<std::string> Candidates(const std::string& file, const std::vector<std::string>& dirs) {
  std::vector<std::string> out = {file};
  std::filesystem::path path(file);
  std::vector<std::filesystem::path> parts(path.begin(), path.end());
  for (const std::string& dir : dirs) {
    for (size_t skip = 0; skip < parts.size(); ++skip) {
      std::filesystem::path tail;
      for (size_t k = skip; k < parts.size(); ++k) {
        if (parts[k] == "/" || parts[k] == ".." || parts[k] == ".") continue;
        tail /= parts[k];
      }
      if (!tail.empty()) out.push_back((std::filesystem::path(dir) / tail).string());
    }
  }
  return out;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

SourceSnippet::SourceSnippet(std::vector<std::string> source_dirs)
    : source_dirs_(std::move(source_dirs)) {}

const std::optional<std::vector<std::string>>& SourceSnippet::Lines(const std::string& file) {
  auto [it, inserted] = files_.try_emplace(file);
  if (!inserted) return it->second;
  for (const std::string& candidate : Candidates(file, source_dirs_)) {
    if (std::optional<std::string> text = ReadSource(candidate)) {
      it->second = SplitLines(*text);
      break;
    }
  }
  return it->second;
}

std::vector<SourceLine> SourceSnippet::Around(const std::string& file, int line, int context) {
  if (file.empty() || line <= 0) return {};
  const std::optional<std::vector<std::string>>& lines = Lines(file);
  if (!lines || static_cast<size_t>(line) > lines->size()) return {};
  std::vector<SourceLine> out;
  int first = std::max(1, line - context);
  int last = std::min(static_cast<int>(lines->size()), line + context);
  for (int n = first; n <= last; ++n) out.push_back({n, (*lines)[static_cast<size_t>(n - 1)]});
  return out;
}

}  // namespace heapgraph::report
