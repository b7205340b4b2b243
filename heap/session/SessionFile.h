// heap/session/: the `session` file of a recording directory: which process wrote it, when it
// started, how many allocation sequence numbers were handed out, and what the next start needs to
// tell how it ended (version 2 SessionRecord: boot id, executable build-id, exit, fatal signal,
// heartbeat, app state, cgroup OOM-kill counter). Every method is async-signal-safe and never
// allocates.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class SessionFile {
 public:
  static constexpr uint64_t kSequenceBlock = 1024;

  // `first_sequence`: where sequence numbers continue from (a forked child continues its
  // parent's). `heartbeat_interval_ms` 0: no heartbeat thread will beat this session.
  bool Create(int dir_fd, uint32_t max_depth, uint64_t first_sequence = 0,
              uint32_t heartbeat_interval_ms = 0, uint32_t hang_threshold_ms = 0);
  void SetExecutableBuildId(const uint8_t* id, uint32_t length);
  // The `heapgraph run` this process belongs to (option run_tag), for the run's summary.
  void SetRunTag(uint32_t tag);
  // The library destructor ran (return from main or exit()).
  void MarkExited();
  // exit/_exit: recorded only by the process that created the session (not a vfork child).
  void RecordExit(format::ExitKind kind, int status);
  // The first fatal or terminating signal (its details are written only by the thread whose
  // signal won); ClearSignal forgets it when the program survived it, and only when called on the
  // thread that recorded it.
  void RecordSignal(int signal, int code, uint64_t address);
  void ClearSignal(int signal);
  void SetAppState(format::AppState state);
  void CountAppHeartbeat();
  // One heartbeat (the monitor thread): tick time, progress, cgroup OOM-kill counter. Progress
  // is heapgraph_heartbeat() calls once the program makes any, else `allocation_progress` (any
  // value that changes when the program allocates or frees; UINT64_MAX: the sequence counter).
  // `read_cgroup` false (the beat right after Create, which has just found the counter and read
  // it): the counter is taken as read at start, without looking for the cgroup again.
  void Beat(uint64_t allocation_progress = UINT64_MAX, bool read_cgroup = true);
  // Reserves kSequenceBlock consecutive sequence numbers; returns the first.
  uint64_t TakeSequenceBlock();
  format::SessionHeader* header() const { return header_; }

  const MappedFile& file() const { return file_; }

 private:
  bool OwnedByThisProcess() const;

  MappedFile file_;
  format::SessionHeader* header_ = nullptr;
  uint64_t last_progress_ = UINT64_MAX;  // Beat(): the progress counter at the previous beat
  std::atomic<int32_t> signal_tid_{0};   // the thread whose signal is recorded (0: none)
};

}  // namespace heapgraph
