// heap/session/: what the next start of a program does with the FOOM dumps its earlier runs left in
// the recording root: classifies each finished run of the same executable that has no `exit` file
// yet (ExitClassifier, written as <dir>/exit, mode 0600, via exit.tmp + rename), then removes the
// oldest finished runs of that executable beyond `keep`: each is first renamed to
// kRemovingPrefix + name, then either parked as a spare for the next recording (its mapped files
// emptied, their inodes kept: RecordingDirectory::kSparePrefix) while a spare slot is free, or
// emptied and removed; a start also finishes such hidden directories that an earlier start left
// when it exited mid-removal. Directories of running
// processes and of other executables are never touched. A run is finished when its pid (with its
// start time) is not in this pid namespace AND it cannot be alive elsewhere (another container
// sharing the root): it recorded its exit, or its heartbeat is stale (MayBeAliveElsewhere). Runs on
// the recorder's tool thread, whose allocations are not recorded; libc only, no exceptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "heap/platform/LineBuffer.h"
#include "heap/session/ExitClassifier.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

namespace DumpRetention {

inline constexpr size_t kMaxRuns = 512;  // directories considered per root
inline constexpr char kRemovingPrefix[] = ".removing.";
// A heartbeat is stale after kStaleHeartbeats periods (at least kMinStaleNs); a run without
// heartbeats counts as possibly alive for kNoHeartbeatBoundNs after its start.
inline constexpr uint32_t kStaleHeartbeats = 3;
inline constexpr uint64_t kMinStaleNs = 2'000'000'000ull;
inline constexpr uint64_t kNoHeartbeatBoundNs = 600'000'000'000ull;

// `own_name`: this process's directory (never classified or removed). `executable` nullptr: the
// runs of every executable in the root, each kept to its own newest `keep`. `keep` 0: keep all.
// `busy_tags`: the run_tags of `heapgraph run`s in progress, whose finished runs are classified
// but not removed (their summaries read them when they end). Returns the number of directories
// removed.
size_t Run(int root_fd, const char* own_name, const char* executable, uint32_t keep,
           std::span<const uint32_t> busy_tags = {});

// The `exit` file text for a classification (docs/foom-report.md).
void Format(const ExitClassification& c, uint64_t realtime_ns, int classifier_pid, LineBuffer* out);
// True when a run that did not record its exit has beaten (or, without heartbeats, started)
// too recently to be called dead: it may run in another pid namespace.
bool MayBeAliveElsewhere(const format::SessionHeader& session, bool has_record,
                         uint64_t now_realtime_ns);
// Reads a session header (version 1 or 2) from `dir_fd`; false when missing or not a session.
bool ReadSession(int dir_fd, format::SessionHeader* out, bool* has_record);
// The same for the recording directory at `dir_path` (never through a link).
bool ReadSessionIn(const char* dir_path, format::SessionHeader* out, bool* has_record);

}  // namespace DumpRetention

}  // namespace heapgraph
