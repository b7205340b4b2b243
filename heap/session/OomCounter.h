// heap/session/: the OOM-kill counter of a process's memory cgroup: "oom_kill N" in cgroup v2
// memory.events or cgroup v1 memory.oom_control. Finds the file through /proc/<pid>/cgroup and
// reads it with open/read into stack buffers (libc only, no allocation: usable from the recorder's
// tool thread and from readers).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

namespace OomCounter {

// The counter file of process `pid` (0 = self): the v2 memory.events of its unified cgroup when
// that file exists, else the v1 memory controller's memory.oom_control. False when neither is
// readable (no memory cgroup), leaving `out` empty.
bool FindPath(int pid, char* out, size_t size);
// The "oom_kill N" value of `path`, or format::kUnknownCounter when unreadable or absent.
uint64_t Read(const char* path);
// The value of "key N" in `text` (a memory.events-style list); false when absent.
bool ParseKey(const char* text, size_t length, const char* key, uint64_t* out);

}  // namespace OomCounter

}  // namespace heapgraph
