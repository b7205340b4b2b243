// reader/: reads a recording's `pressure` file (format::PressureHeader, then per
// watermark crossing a PressureRecord and its CategoryTotal entries; docs/recording-format.md).
// Same safety rule as RecordingReader: every length is checked against the bytes actually read,
// so a corrupt or hostile file gives a RecordingError "pressure: <problem>", never a crash. A
// short last entry (the process was killed while writing it) is dropped and flagged.
#pragma once

#include <cstdint>
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
  // The largest pressure file read. The format does not bound the number of entries (one per
  // rising watermark crossing, re-armed only after usage falls back), but a real file stays far
  // below this; a larger one is refused in one line rather than read into memory.
  static constexpr uint64_t kMaxFileSize = uint64_t{256} << 20;

  // Throws RecordingError on a file that is not a valid pressure file, or is not a regular file,
  // or is larger than kMaxFileSize (reader/InputFile). A missing file gives an empty time line
  // with present() false.
  explicit PressureTimeline(const std::string& directory);
  // A time line from its parts, present (a saved FOOM report read back by
  // report/FoomReportJsonReader).
  PressureTimeline(const format::PressureHeader& header, std::vector<PressureEntry> entries,
                   bool truncated);

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
