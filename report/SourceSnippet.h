// report/: the source lines around a frame's line, when the source file is on disk, for the HTML
// leak page. The file is found as the frame names it (absolute, or relative to the working
// directory), else under each of the given source directories (the path as recorded, then its
// last components); it is opened through reader/InputFile (regular files only, never blocking) and
// only files up to kMaxSourceSize are read. Nothing on disk: no snippet, never an error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace heapgraph::report {

struct SourceLine {
  int number = 0;
  std::string text;  // as in the file, without the newline (not escaped)
};

class SourceSnippet {
 public:
  static constexpr uint64_t kMaxSourceSize = uint64_t{8} << 20;

  explicit SourceSnippet(std::vector<std::string> source_dirs = {});

  // Lines line-context .. line+context of `file`, or empty when it is not found or too short.
  std::vector<SourceLine> Around(const std::string& file, int line, int context);

 private:
  // The file's lines, read once; nullopt when not found.
  const std::optional<std::vector<std::string>>& Lines(const std::string& file);

  std::vector<std::string> source_dirs_;
  std::map<std::string, std::optional<std::vector<std::string>>> files_;
};

}  // namespace heapgraph::report
