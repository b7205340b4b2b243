// heap/platform/: where a process sits in the cgroup hierarchies, read from its /proc/<pid>/cgroup
// text, one "hierarchy-id:controllers:path" line per hierarchy: the unified (v2) hierarchy's path
// ("0::<path>") and the path in the v1 hierarchy that holds the memory controller. A controller
// is bound to one hierarchy, so when a v1 hierarchy holds memory the unified one has no memory
// files (memory.current, memory.events) and nothing need look there. Views into the text; no
// allocation, libc only.
#pragma once

#include <string_view>

namespace heapgraph {

struct ProcCgroup {
  std::string_view unified;    // the path of the "0::" line
  std::string_view memory_v1;  // the path of the v1 line whose controllers include "memory"
  bool has_unified = false;
  bool has_memory_v1 = false;

  static ProcCgroup Parse(std::string_view text);
};

}  // namespace heapgraph
