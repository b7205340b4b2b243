// reader/: reads a recording's `pressure` file (format::PressureHeader, then per
// watermark crossing a PressureRecord and its CategoryTotal entries; docs/recording-format.md).
// Same safety rule as RecordingReader: every length is checked against the bytes actually read,
// so a corrupt or hostile file gives a RecordingError "pressure: <problem>", never a crash. A
// short last entry (the process was killed while writing it) is dropped and flagged.
#pragma once

#include <string>
#include <vector>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

struct PressureEntry {
  format::PressureRecord record;
  std::vector<format::CategoryTotal> categories;
};

class PressureTimeline {
 public:
  // Throws RecordingError on a file that is not a valid pressure file. A missing file gives an
  // empty time line with present() false.
  explicit PressureTimeline(const std::string& directory);

  bool present() const { return present_; }
  const format::PressureHeader& header() const { return header_; }
  const std::vector<PressureEntry>& entries() const { return entries_; }
  bool truncated() const { return truncated_; }  // a short last entry was dropped

  // Parses the file's bytes (exposed for tests and the fuzzer).
  void Parse(const std::string& bytes);

 private:
  bool present_ = false;
  bool truncated_ = false;
  format::PressureHeader header_ = {};
  std::vector<PressureEntry> entries_;
};

}  // namespace heapgraph
