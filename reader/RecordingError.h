// reader/: the one exception of the readers (RecordingReader, InputFile, TypesFile,
// PressureTimeline): a recording or one of its files cannot be read.
#pragma once

#include <stdexcept>
#include <string>

namespace heapgraph {

// what() is one line naming the file and the problem, e.g.
// "stacks: unsupported format version 7 (this reader knows 1)".
class RecordingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // "file: problem".
  RecordingError(const char* file, const std::string& problem)
      : std::runtime_error(std::string(file) + ": " + problem) {}
};

}  // namespace heapgraph
