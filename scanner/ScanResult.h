// scanner/: what one leak scan found, as the graph and report layers consume it. Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "heap/store/PersistedFormat.h"
#include "reader/RecordingReader.h"
#include "scanner/ExplainScanResult.h"
#include "scanner/TypedScanResult.h"

namespace heapgraph::scanner {

// A block that no root reaches (directly or through other reachable blocks).
struct LeakedBlock {
  uint64_t address = 0;
  uint64_t size = 0;
  uint32_t stack = 0;  // stack id in the recording's stack table
  uint32_t seq = 0;    // allocation sequence number (low 32 bits)
  format::AllocFunction function = format::AllocFunction::kNone;
  // The program asked that it never be reported (BlockRecord::ignored): only in the snapshot's
  // copy of the live blocks, never in a result (an ignored block is never leaked).
  bool ignored = false;
};

struct ScanTimings {
  // Threads stopped: capture + snapshot's clone. The live blocks' copy is not in it when it is
  // made before the stop, or beside it (BlockCopy: then the ptrace helper's clock, which ends at
  // its last detach); under signal suspension a copy beside the stop is made while it holds.
  double world_stopped_ms = 0;
  // Recorder locks held (allocations wait): the copy and the stop, or the longer of them when the
  // copy is made beside the stop.
  double allocation_pause_ms = 0;
  // The longest time one program thread waited for a recorder lock during the check, timed by that
  // thread (heap/store/LockWait): the pause an allocating thread felt, wake-up delay included.
  double longest_allocation_wait_ms = 0;
  double total_ms = 0;  // request to result, report excluded
};

struct ScanStats {
  uint64_t threads = 0;
  uint64_t live_blocks = 0;
  uint64_t live_bytes = 0;
  uint64_t root_ranges = 0;
  uint64_t root_bytes = 0;
  uint64_t heap_words_scanned = 0;
  // Pages that faulted when read (PROT_NONE or guard pages inside a block or a root, pages of a
  // root past the end of its file): the scan went on (scanner/UnreadablePages).
  uint64_t unreadable_pages = 0;
  // Pages of private anonymous roots and of blocks of 1 MiB or more that exist neither in memory
  // nor in swap (never written: zeros), skipped unread (scanner/PresentPages).
  uint64_t absent_pages = 0;
  std::string stop_method;  // "ptrace" or "signals"
  // Scanned in the program's own memory while the world stayed stopped, without a snapshot
  // process (ScanOptions::in_stopped_world).
  bool in_stopped_world = false;
};

struct ScanResult {
  bool ok = false;
  std::string error;          // one line, when !ok
  std::string notice;         // one line worth telling the user, e.g. the ptrace fallback
  std::string recording_dir;  // the recording whose stacks and modules the ids refer to
  // The recorder's report options (HeapgraphRecorderView): suppression files, ';'-separated
  // ("" none), the directory of symbolized addresses shared with other processes ("" none), leak
  // records the text prints (0 = all), the categories table in the text.
  std::string suppressions;
  std::string symbol_cache;
  uint32_t max_leaks = 0;
  bool categories = false;
  uint32_t preview_bytes = 0;  // leak_preview (check/LeakPreview)
  // Its files as the recorder held them open (duplicates): how the report reads them, so that
  // a program that dropped privileges since the recorder made the 0700 directory can be checked.
  RecordingReader::OpenFiles recording_files;
  std::vector<LeakedBlock> leaked;                   // sorted by address
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // references among `leaked` (indices)
  ScanTimings timings;
  ScanStats stats;
  TypedScanResult typed;        // types, typed references, retention paths (ScanOptions::types)
  ExplainScanResult explained;  // the chains of ScanOptions::explain's targets
};

}  // namespace heapgraph::scanner
