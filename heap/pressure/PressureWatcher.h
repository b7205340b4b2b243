// heap/pressure/: the memory-pressure watcher: a tool thread (its allocations are not recorded)
// that reads MemoryLimit every watch_interval_ms, or sooner when the PSI trigger fires, and at each
// rising watermark crossing (default 50/75/90 % of the limit) appends to the recording's `pressure`
// file what can only be known while the process lives: a time-line entry (time, RSS, cgroup
// current/limit and OOM counters, live blocks/bytes), the category totals of the live blocks
// (CategoryTotals), and refreshes the `types` file (type names read from live blocks now, by
// libheapgraph_scan.so's heapgraph_internal_refresh_types). A watermark re-arms when usage falls
// kRearmPercent below it. Started by the recorder's constructor; not in forked children. The PSI
// trigger is armed once the watcher has run kPsiDelayMs (polls only before): closing a trigger
// costs a kernel RCU grace period, which a short-lived process would pay at exit for nothing.
#pragma once

#include <cstdint>

#include "heap/config/Config.h"
#include "heap/platform/HighDescriptor.h"
#include "heap/platform/ThreadStop.h"
#include "heap/pressure/CategoryTotals.h"
#include "heap/pressure/MemoryLimit.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/VmRegionTree.h"

namespace heapgraph {

class PressureWatcher {
 public:
  static constexpr uint32_t kRearmPercent = 10;
  static constexpr uint64_t kPsiDelayMs = 1000;

  struct Recording {
    int dir_fd;
    LiveAllocationTree* heap;
    VmRegionTree* vm;
    const format::SessionHeader* session;
  };

  // From the recorder's constructor: starts the thread when `watch` says so (auto: a
  // memory_limit or a finite cgroup v2 memory.max). One line on stderr if it cannot start.
  // `stoppable`: Stop() may end it (ThreadStop).
  static void Install(const Config& config, const Recording& recording, bool stoppable = false);
  // Ends a stoppable watcher's thread, waiting for it up to kStopWaitMs (a type refresh may be
  // running: it then ends later); true once it has ended. No reading follows.
  static constexpr uint32_t kStopWaitMs = 10;
  static bool Stop();
  // The first half of Stop(): asks the thread to end and returns at once (ThreadStop::Request).
  static void RequestStop();

 private:
  PressureWatcher(const Config& config, const Recording& recording);
  static void* Main(void* self);
  void Loop();
  // Arms the PSI trigger, once, when the watcher has run kPsiDelayMs.
  void ArmPsiWhenDue();
  // Sleeps until the next poll; returns the trigger that woke it, or kStopped.
  static constexpr uint32_t kStopped = UINT32_MAX;
  uint32_t Wait();
  // Handles one reading: fires every armed watermark at or below `percent`, re-arms the others.
  void Check(uint32_t trigger);
  void WriteEntries(const MemoryReading& reading, uint32_t percent, uint32_t trigger,
                    const uint32_t* crossed, uint32_t crossed_count);
  void CollectTotals();
  bool RefreshTypes();
  bool OpenFile();

  const Config& config_;
  Recording recording_;
  MemoryLimit limit_;
  CategoryTotals totals_;
  HighDescriptor file_;  // the pressure file; abandoned (thread ends) once the host took it
  bool armed_[format::kMaxWatermarks] = {};
  uint64_t start_ns_ = 0;
  bool psi_tried_ = false;
  ThreadStop stop_;
  int stop_fd_ = -1;  // what Wait() watches of stop_ (-1 once the program closed it)
};

}  // namespace heapgraph
