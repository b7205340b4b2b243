// report/: how a recorded run ended, for the FOOM report: either read from the `exit` file that
// the next start of the program wrote into the run's directory (heap/session/DumpRetention.h), or
// classified now from the session with heap/ExitClassifier. Parsing is strict about the fields it
// uses and gives one-line errors ("exit: ...").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heap/session/ExitClassifier.h"
#include "reader/RecordingReader.h"

namespace heapgraph::report {

struct ExitRecord {
  std::string kind = "unknown";  // ExitClassifier::Name spelling
  std::string reason;
  std::string source;  // "exit file" (classified at the next start) or "classified now"
  uint32_t signal = 0;
  int32_t signal_code = 0;
  uint64_t signal_address = 0;
  bool exit_status_known = false;
  int32_t exit_status = 0;
  uint64_t oom_kills_before = format::kUnknownCounter;
  uint64_t oom_kills_now = format::kUnknownCounter;
  uint64_t stall_ms = 0;
  bool foreground = true;

  static ExitRecord FromClassification(const ExitClassification& c, const std::string& source);
  // Parses the `exit` file text. Throws RecordingError("exit: ...").
  static ExitRecord Parse(const std::string& text);
  // <dir>/exit when it exists, else the session classified now; nullopt-like "unknown" record
  // with a reason when the directory has no session.
  static ExitRecord For(const RecordingReader& reader);
};

}  // namespace heapgraph::report
