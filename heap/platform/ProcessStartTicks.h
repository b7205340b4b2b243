// heap/platform/: when a process started, in clock ticks since boot: field 22 (starttime) of
// /proc/<pid>/stat. Together with the pid it names one process for the life of a boot (a reused
// pid gets a later start), which is what recording directories are named after and how a
// recorded run is known to be still alive. No allocation: usable in hooks and in the fork child.
// Includes libc only.
#pragma once

#include <cstdint>

namespace heapgraph {

namespace ProcessStartTicks {

// This process's start (/proc/self/stat, read once per process); 0 if unreadable.
uint64_t OfSelf();
// The start of `pid`; 0 if no such process runs, `pid` <= 0, or the file is unreadable.
uint64_t Of(int pid);
// Field 22 of a /proc/<pid>/stat text (NUL-terminated); 0 if the text has no such field.
uint64_t Parse(const char* stat_text);

}  // namespace ProcessStartTicks

}  // namespace heapgraph
