// report/: two leak reports compared by leak signature (report/LeakSignature.h): what is new,
// what is gone, what grew. A baseline run fails only on new signatures (`heapgraph run
// --baseline`, `heapgraph diff`). Works on the JSON form of reports (docs/report-format.md), so
// reports of other builds and machines compare; a record without a "signature" (a report written
// before there were signatures) gets one computed from its frames. Suppressed records count in
// neither report. Several reports can make one side (the processes of a run).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace heapgraph::report {

// The unsuppressed records of one signature, summed.
struct SignatureTotals {
  std::string signature;
  std::string kind;    // "direct" / "indirect"
  uint64_t count = 0;  // blocks
  uint64_t bytes = 0;
  std::vector<std::string> where;  // up to 3 frames with a function: "function (file:line)"
};

class LeakSignatures {
 public:
  // Adds every record of `report` (a leak report's JSON); throws std::runtime_error naming
  // `name` when a record is malformed.
  void Add(const nlohmann::ordered_json& report, const std::string& name);
  const std::map<std::string, SignatureTotals>& totals() const { return totals_; }

 private:
  std::map<std::string, SignatureTotals> totals_;
};

struct Growth {
  SignatureTotals before;
  SignatureTotals after;
};

struct LeakDiff {
  std::vector<SignatureTotals> added;    // in the new report only: a new leak
  std::vector<SignatureTotals> removed;  // in the old one only
  std::vector<Growth> grew;              // in both, more blocks or bytes now
  size_t unchanged = 0;                  // in both, not more

  // Largest first within each list.
  static LeakDiff Compare(const LeakSignatures& before, const LeakSignatures& after);
};

}  // namespace heapgraph::report
