// heap/lag/: the lag monitor's watchdog, a tool thread (its allocations are never recorded, the
// recorder marks it through on_thread_start) started at the first heapgraph_work_begin. Every
// lag_interval_ms it checks each monitored thread (MonitoredThreads): a unit of work running
// longer than lag_threshold_ms is a lag, a thread above lag_cpu_percent of a core over the
// interval is recorded too. While a unit runs longer than two sampling periods, it sends the
// thread lag_signal every lag_sample_ms; the handler, on that thread, captures its stack with the
// recorder's unwinder (Settings::sample) into the thread's ring; the process is never stopped. A
// lag is written to the recording's `lag` file (format::LagRecord, one write each) with its most
// time-consuming stack (CostlyStack), annealed (Annealing): the same stack is not written twice
// in one lag, and the checks back off along the Fibonacci sequence. When a unit that was written
// ends, a kLagEnded record follows, so a lag without one was in progress when the process died.
#pragma once

#include <signal.h>

#include <cstdint>

#include "heap/config/Config.h"
#include "heap/lag/Annealing.h"
#include "heap/lag/MonitoredThreads.h"
#include "heap/platform/HighDescriptor.h"

namespace heapgraph {

class LagWatchdog {
 public:
  struct Settings {
    const Config* config = nullptr;
    int dir_fd = -1;  // the recording directory
    // On the sampled thread, in the signal handler: captures its stack, skipping the frames up to
    // and including the signal frame [skip_begin, skip_end), interns it, stores the interrupted
    // frame in *top and returns the stack id (0: not now, e.g. inside a hook). Async-signal-safe.
    uint32_t (*sample)(uintptr_t skip_begin, uintptr_t skip_end, uintptr_t* top) = nullptr;
    void (*on_thread_start)() = nullptr;  // marks the watchdog as a tool thread
  };

  // heapgraph_work_begin of the calling thread; the first call of any thread starts the watchdog
  // (once per process). Never allocates from the host's malloc.
  static void BeginWork(const Settings& settings);
  static void EndWork();

 private:
  struct ThreadState {           // the watchdog's own view of one slot
    uint64_t reported_unit = 0;  // the unit last written as a lag (0: none)
    uint64_t cpu_ns = 0;         // the thread's CPU time at the last check
    uint32_t missed = 0;         // sampling signals not answered in unit missed_unit
    uint64_t missed_unit = 0;
    Annealing lag;
    Annealing cpu;
  };

  explicit LagWatchdog(const Settings& settings);
  static void Start(const Settings& settings);
  static void* Main(void* self);
  static void OnSignal(int signal, siginfo_t* info, void* context);
  bool InstallHandler();
  bool OpenFile();
  void Loop();
  void SampleRunning(uint64_t now);
  void Check(uint64_t now, uint64_t elapsed_ns);
  void CheckThread(uint32_t index, uint64_t now, uint64_t elapsed_ns);
  void Write(uint32_t kind, uint32_t index, uint64_t unit, uint64_t duration_ns,
             uint32_t cpu_permille, bool with_stack);

  Settings settings_;
  HighDescriptor file_;
  bool sampling_ = false;
  ThreadState state_[MonitoredThreads::kMaxThreads];
};

}  // namespace heapgraph
