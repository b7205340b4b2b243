// heap/pressure/: where the memory-pressure watcher reads how close the process is to being killed
// for memory: its RSS (/proc/self/statm) against a configured limit, its cgroup v2 memory.current
// against memory.max (and the memory.events counters), and a PSI trigger (memory.pressure of the
// cgroup, else /proc/pressure/memory) that wakes a poll() with POLLPRI when tasks stall on memory.
// Libc only; no allocation (file reads go into stack buffers).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

struct MemoryReading {
  uint64_t rss = 0;             // bytes resident
  uint64_t cgroup_current = 0;  // memory.current, 0 without a cgroup v2 memory controller
  uint64_t cgroup_max = 0;      // memory.max, 0 when "max" (no limit) or unknown
  uint64_t oom_events = 0;      // memory.events "oom" (allocations that hit memory.max)
  uint64_t oom_kills = 0;       // memory.events "oom_kill"
};

class MemoryLimit {
 public:
  enum Source : uint32_t { kRss = 1, kCgroup = 2, kPsi = 4 };
  static constexpr size_t kMaxPath = 512;

  MemoryLimit() = default;
  ~MemoryLimit();
  MemoryLimit(const MemoryLimit&) = delete;
  MemoryLimit& operator=(const MemoryLimit&) = delete;

  // Finds the RSS and cgroup sources. `configured` is the RSS limit in bytes (0: none). Opens
  // no PSI trigger: a trigger's descriptor costs its process a kernel RCU grace period (10-20 ms)
  // when it is closed, at exit too, so only a watcher that runs arms one (ArmPressureTrigger).
  void Discover(uint64_t configured);
  // Arms the PSI trigger: `stall_us` of memory stall within `window_us`. True (and kPsi in
  // sources()) once armed; false where the kernel has no PSI or it cannot be written here.
  bool ArmPressureTrigger(uint64_t stall_us = 150000, uint64_t window_us = 2000000);
  // Whether ArmPressureTrigger would find a PSI file it may write (opens nothing).
  bool PressureTriggerPossible() const;

  MemoryReading Read() const;
  // Usage in percent of the nearest limit: the larger of rss / configured and
  // cgroup_current / cgroup_max; 0 when there is no limit.
  uint32_t Percent(const MemoryReading& reading) const;
  // The limit Percent() is taken against in `reading` (bytes; 0 = none).
  uint64_t EffectiveLimit(const MemoryReading& reading) const;
  bool HasLimit() const;

  uint32_t sources() const { return sources_; }
  uint64_t configured() const { return configured_; }
  int pressure_fd() const { return psi_fd_; }  // POLLPRI when the trigger fires; -1 = none
  const char* cgroup_dir() const { return cgroup_dir_; }  // "" without cgroup v2 memory files

  // Parsers of the kernel's formats (exposed for tests).
  static bool ParseCgroup2Mount(const char* mountinfo, char* out, size_t size);
  static void ParseEvents(const char* memory_events, MemoryReading* reading);

 private:
  bool FindCgroup();
  bool OpenCgroupDir(const char* mount, const char* path);

  uint64_t configured_ = 0;
  uint32_t sources_ = 0;
  int cgroup_fd_ = -1;  // the cgroup's directory
  int psi_fd_ = -1;
  char cgroup_dir_[kMaxPath] = "";
};

}  // namespace heapgraph
