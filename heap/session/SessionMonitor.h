// heap/session/: the recorder's session tool thread. Once at start it runs DumpRetention on the
// recording root (classifies the previous runs of this executable, prunes to the last `keep`); then
// it beats the session every `interval_ms` (SessionFile::Beat: tick time, program progress, cgroup
// OOM-kill counter), which is what lets the next start tell a hang from an OOM kill. A forked child
// has no monitor (its session says heartbeat_interval_ms 0). Between beats it also watches one
// descriptor for its owner (`wake_fd`: the leak-check signal's pipe), so that a thread that would
// wait there for a signal that never comes is started only once one came: on_wake() runs on the
// first byte and starts it, and the byte is left for it to read. Nothing slow runs here: it stays
// apart from the memory-pressure watcher's thread and from the leak checks so that a type refresh
// or a check never delays a beat (docs/configuration.md). A monitor started `stoppable` also
// watches a descriptor of its own and ends when Stop() writes it: the at-exit check stops it first,
// so that a program with no thread of its own but the exiting one has no thread to stop (no ptrace
// attach, docs/performance.md). libc + pthreads only.
#pragma once

#include <pthread.h>

#include <cstdint>

namespace heapgraph {

class SessionFile;

namespace SessionMonitor {

struct Settings {
  SessionFile* session = nullptr;
  int root_fd = -1;             // -1: no dump retention
  const char* own_name = "";    // this process's directory name in the root
  const char* executable = "";  // the session's executable path
  uint32_t keep = 3;
  uint32_t interval_ms = 1000;                  // 0: housekeeping only, no heartbeat
  void (*on_thread_start)() = nullptr;          // marks the thread as a tool thread
  uint64_t (*allocation_progress)() = nullptr;  // see SessionFile::Beat; null: the sequence
  int wake_fd = -1;                             // watched until it is first readable; -1: none
  void (*on_wake)() = nullptr;  // runs once, when wake_fd is first readable (reads nothing)
  bool stoppable = false;       // Stop() may end it (one more descriptor, a joinable thread)
};

// Starts the thread (detached unless stoppable); false if it could not be created.
bool Start(const Settings& settings);
// Ends a stoppable monitor started by this process (not by a parent before a fork) and waits for
// it up to kStopWaitMs (its first pass may still be pruning old recordings); no heartbeat follows.
// True once it has ended; false when there is none or it did not end in time (it ends later).
inline constexpr uint32_t kStopWaitMs = 10;
bool Stop();
// The first half of Stop(): asks the thread to end and returns at once (ThreadStop::Request).
void RequestStop();

}  // namespace SessionMonitor

}  // namespace heapgraph
