// heap/config/: recorder configuration, parsed from HEAPGRAPH_OPTIONS ("key=value" pairs separated
// by ',' or ':') without allocating. A bad entry prints one line on stderr and leaves that key at
// its previous value; parsing never fails the host. Includes libc only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

struct Config {
  static constexpr size_t kMaxPath = 512;

  char dir[kMaxPath] = "";              // root of per-process recording directories ("" = default)
  uint32_t depth = 32;                  // frames captured per allocation, 1..64
  uint64_t large_threshold = 8u << 20;  // bytes; 0 disables the large-allocation monitor
  char large_log[kMaxPath] = "";        // "" = stderr, else a file appended to
  uint32_t shards = 64;                 // live-allocation tree shards, power of two
  uint32_t shard_capacity_log2 = 22;    // max nodes per shard = 2^this
  uint32_t stack_slots_log2 = 22;       // stack table slots = 2^this (8 bytes each)
  bool record_mmap = true;              // anonymous mmap/munmap/mremap as VM regions
  bool enabled = true;                  // false: interpose but never record
  bool start_paused = false;
  // Leak checks (libheapgraph_scan.so, loaded when one runs).
  bool leak_check_at_exit = false;  // after static destructors, like LeakSanitizer
  char leak_json[kMaxPath] = "";    // report files of the at-exit check ("" = none)
  char leak_text[kMaxPath] = "-";   // "-" = stderr, "" = none
  uint32_t leak_exitcode = 23;      // exit status when the at-exit check finds leaks
  uint32_t scan_signal = 39;        // SIGRTMIN+5 with glibc; 0 = no signal-triggered checks
  bool interior_pointers = true;    // false: only pointers to a block's start keep it alive
  // FOOM dumps (docs/foom-report.md).
  uint32_t keep = 3;             // finished runs of the same executable kept in the root; 0 = all
  uint32_t heartbeat_ms = 1000;  // session heartbeat period; 0 = no heartbeat thread
  uint32_t hang_ms = 5000;       // no progress this long before death = hang
  bool signals = true;           // record fatal/terminating signals (chaining the app's handlers)
  // Sampling (docs/configuration.md, "Sampling"): 0 = every allocation is recorded (full mode).
  uint64_t sample_mean = 0;  // mean bytes between sample points; 1..2^30
  uint64_t sample_seed = 0;  // 0 = from the clock and pid
  // Memory-pressure watcher (docs/configuration.md, "Memory-pressure watcher").
  static constexpr uint32_t kMaxWatermarks = 8;
  enum Watch : uint32_t { kWatchOff = 0, kWatchOn = 1, kWatchAuto = 2 };
  uint32_t watch = kWatchAuto;  // auto: on with memory_limit or a cgroup v2 memory.max
  uint64_t memory_limit = 0;    // bytes of RSS; 0 = use the cgroup's limit only
  uint32_t watch_interval_ms = 100;
  uint32_t watermark_count = 3;
  uint32_t watermarks[kMaxWatermarks] = {50, 75, 90};  // percent of the limit, ascending

  // Applies every entry of `options` (may be null). Returns the number of rejected entries; each
  // rejection has already been reported on stderr as one line prefixed "heapgraph: ".
  int Parse(const char* options);

  // Applies a single key=value entry; false (after one line on stderr) if rejected.
  bool ApplyEntry(const char* key, size_t key_len, const char* value, size_t value_len);
};

// Parses "123", "8K", "8M", "1G" (binary units). Returns false on garbage or overflow.
bool ParseByteSize(const char* text, size_t length, uint64_t* out);

}  // namespace heapgraph
