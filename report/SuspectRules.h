// report/: the rules that mark a FOOM report's categories as suspect (seed 000: "whether the
// number of <type> is abnormal; whether the allocation size of other categories is abnormal").
// A rules file has one rule per line, '#' starts a comment:
//     count PATTERN N        the category holds >= N live blocks
//     bytes PATTERN SIZE     the category holds >= SIZE bytes (suffix K, M, G: binary units)
//     share PATTERN F        the category holds >= F (0 < F <= 1) of all live bytes
// PATTERN is a shell glob (fnmatch) over category names: "*", "Malloc *", "VM: *", "std::map*".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapgraph::report {

class SuspectRules {
 public:
  enum class Metric { kCount, kBytes, kShare };
  struct Rule {
    Metric metric = Metric::kBytes;
    std::string pattern;
    double threshold = 0;  // blocks, bytes or a fraction
    std::string text;      // the rule as written, for reasons
  };

  // share * 0.3, bytes * 256M, count * 1000000.
  static SuspectRules Defaults();
  // Throws std::runtime_error("rules:LINE: ...") on a malformed line.
  static SuspectRules Parse(const std::string& text);
  // Parse() of a file; throws std::runtime_error naming the file when it cannot be read.
  static SuspectRules Load(const std::string& path);

  // One reason per rule the category meets, e.g. "holds 62% of live bytes (rule: share * 0.3)".
  std::vector<std::string> Evaluate(const std::string& category, uint64_t count, uint64_t bytes,
                                    uint64_t total_bytes) const;
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
};

}  // namespace heapgraph::report
