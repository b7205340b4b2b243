// tools/: what `heapgraph run` does in a recording root besides running the program. While a run
// is in progress it holds a marker in the root, `.run.<run_tag>` (hidden: the recorder's retention
// and `heapgraph foom` skip dot names), holding the run tool's pid and start ticks, removed however
// the run ends. The processes of a run prune nothing (option run_tag): before it starts the
// program, a run with a kept --dir classifies and prunes the finished runs of every executable in
// the root to `keep` (DumpRetention), except those of runs whose marker names a live process, which
// their own summaries will read. A marker whose process is gone (a killed run) is removed then.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapgraph::tools {

class RunRoot {
 public:
  // Makes the marker of run `run_tag` in `root` (a root it cannot be made in holds none: its
  // finished processes may then be pruned by another run's start).
  RunRoot(const std::string& root, uint32_t run_tag);
  ~RunRoot();
  RunRoot(const RunRoot&) = delete;
  RunRoot& operator=(const RunRoot&) = delete;

  // The retention described above, with `keep` (option keep).
  void PruneEarlierRuns(uint32_t keep) const;
  // The run tags whose marker in the root names a live process (stale markers are removed).
  std::vector<uint32_t> BusyTags() const;

 private:
  std::string root_;
  std::string marker_;  // "" when it could not be made
  uint32_t run_tag_;
};

}  // namespace heapgraph::tools
