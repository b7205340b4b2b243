// reader/: reads a recording's `lag` file (format::LagHeader, then LagRecord after LagRecord;
// heap/lag/LagWatchdog). Every length is checked: a record with a wrong tag or check word, or a
// short last one, is torn (the process was killed while writing it): reading stops there and
// torn() says so. A file that is not a lag file gives a RecordingError "lag: <problem>".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class LagRecords {
 public:
  static constexpr uint64_t kMaxFileSize = uint64_t{64} << 20;

  // A missing file: no records, present() false.
  explicit LagRecords(const std::string& directory);
  LagRecords() = default;

  bool present() const { return present_; }
  const format::LagHeader& header() const { return header_; }
  const std::vector<format::LagRecord>& records() const { return records_; }
  bool torn() const { return torn_; }
  // The last kLagLong record of a unit no kLagEnded record closed: the lag in progress when the
  // process ended (null: none).
  const format::LagRecord* InProgress() const;

  // Parses the file's bytes (exposed for tests).
  void Parse(const std::string& bytes);

 private:
  bool present_ = false;
  bool torn_ = false;
  format::LagHeader header_ = {};
  std::vector<format::LagRecord> records_;
};

}  // namespace heapgraph
