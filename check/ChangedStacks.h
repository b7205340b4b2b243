// check/: the memory of the "changed" check (heapgraph_check_leaks_changed): the leaked block
// count and bytes of each allocation stack at the previous changed check, so the next one reports
// only the stacks whose count or bytes grew (Valgrind's VALGRIND_DO_CHANGED_LEAK_CHECK). One per
// process (the check's library); callers serialize (one check at a time).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "scanner/ScanResult.h"

namespace heapgraph::report {

class ChangedStacks {
 public:
  static ChangedStacks& Process();

  // Which of `leaked` belong to a stack that grew since the previous call; remembers `leaked`'s
  // totals for the next.
  std::vector<bool> Grown(const std::vector<scanner::LeakedBlock>& leaked);

 private:
  struct Totals {
    uint64_t blocks = 0;
    uint64_t bytes = 0;
  };
  std::unordered_map<uint32_t, Totals> previous_;
};

}  // namespace heapgraph::report
