// heap/runtime/: the large-allocation monitor (seed 002). A single allocation at or above the
// threshold is logged with its stack as "module+offset (build-id)" lines, which symbolize offline,
// and is passed to the user's callback. The check on other allocations is one comparison.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heap/platform/HighDescriptor.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

using LargeAllocationCallback = void (*)(void* address, size_t size, const uintptr_t* frames,
                                         size_t depth, void* user_data);

class LargeAllocationMonitor {
 public:
  // `log_path`: "-" = stderr; "" = kDefaultLog in the directory `dir_fd` (stderr when it is
  // negative); else a path. A path is opened here; kDefaultLog only by the first record (under the
  // log lock, through a descriptor of the directory kept here), so that a process that logs
  // nothing has no large.log (readers treat a missing one as empty). A log that cannot be opened
  // is one line on stderr, and the records go to stderr.
  static constexpr const char* kDefaultLog = "large.log";
  void Configure(uint64_t threshold, const char* log_path, int dir_fd = -1);
  void SetCallback(LargeAllocationCallback callback, void* user_data);

  bool IsLarge(uint64_t size) const {
    uint64_t t = threshold_.load(std::memory_order_relaxed);
    return t != 0 && size >= t;
  }
  void set_threshold(uint64_t t) { threshold_.store(t, std::memory_order_relaxed); }
  uint64_t reported() const { return reported_.load(std::memory_order_relaxed); }

  void Report(void* address, uint64_t size, format::AllocFunction function, const uintptr_t* frames,
              uint32_t depth, const ModuleMap* modules);

 private:
  void LockLog();
  void UnlockLog();
  // Under the log lock: opens kDefaultLog in the kept directory, or falls back to stderr.
  void OpenDefaultLog();

  std::atomic<uint64_t> threshold_{0};
  std::atomic<uint32_t> log_lock_{0};  // one record's lines are never interleaved with another's
  std::atomic<uint64_t> reported_{0};
  int fd_ = 2;  // -1: kDefaultLog in log_dir_, not opened yet
  HighDescriptor log_dir_;
  std::atomic<LargeAllocationCallback> callback_{nullptr};
  std::atomic<void*> user_data_{nullptr};
};

const char* AllocFunctionName(format::AllocFunction function);

}  // namespace heapgraph
