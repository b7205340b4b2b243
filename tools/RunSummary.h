// tools/: what `heapgraph run` says at the end about every process of the run (issue 13 item 6):
// each recording directory under the run's root (`<pid>-<start ticks>`, one per recorded process
// of the tree), the verdict its at-exit check left there (format::kExitCheckFile: leaked blocks
// and bytes, or failed) and the JSON report it wrote, found by expanding "%p" in the report's path
// with its pid. A process without a verdict was not checked (filtered out by --top-only /
// --check-exe, killed, or it exec'd a program that does not record).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace heapgraph::tools {

struct CheckedProcess {
  int pid = 0;
  uint64_t start_ticks = 0;  // its start time (clock ticks since boot): a reused pid's differs
  bool checked = false;      // its at-exit check ran (format::kExitCheckFile)
  std::string error;         // the check could not run
  uint64_t blocks = 0;       // leaked, direct + indirect
  uint64_t bytes = 0;
  std::string report;  // the JSON report this run wrote for it, or empty
};

class RunSummary {
 public:
  // The processes recorded under `root` whose session carries `run_tag` (option run_tag, set by
  // this run in every process it starts: earlier runs' recordings in a kept --dir, another run's
  // beside this one in the same --dir and recordings made without `run` are not this run's), with
  // `json_pattern` ("%p" = pid) as their report paths, when written since `since`.
  RunSummary(const std::string& root, const std::string& json_pattern, uint32_t run_tag,
             std::filesystem::file_time_type since);

  const std::vector<CheckedProcess>& processes() const { return processes_; }
  size_t leaked_processes() const;
  // The one line a CI log grep finds: "heapgraph: run summary: ..."; `show_paths`: name each
  // report (false when the reports are in a temporary root that is removed).
  std::string Line(bool show_paths) const;

 private:
  std::vector<CheckedProcess> processes_;
  bool shared_report_ = false;  // several processes, one path without %p: the last one's survived
};

}  // namespace heapgraph::tools
