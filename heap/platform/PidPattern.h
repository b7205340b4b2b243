// heap/platform/: a path pattern in which "%p" stands for a process id and "%%" for "%"
// (LeakSanitizer's log_path and Valgrind's --log-file forms), so that the processes of a tree
// write their own reports. The at-exit check expands it in the process; `heapgraph run` expands it
// again to find each process's report. No allocation; libc only.
#pragma once

#include <cstddef>

namespace heapgraph {

// `pattern` with every "%p" replaced by `pid` and "%%" by "%" (any other '%' stays) into `out`,
// NUL-terminated and cut to `size` bytes (size >= 1).
void ExpandPidPattern(const char* pattern, int pid, char* out, size_t size);

}  // namespace heapgraph
