// scanner/: the leak result of a scan, from the snapshot process (scanner/SnapshotProcess.h) to
// the scanning process (scanner/LeakScan.h), through a file both hold (the scan's memfd).
// Wire format, from offset 0: one Header (magic "HGSCAN01", the counts, the scan's totals, an
// error line), then header.leaked_count LeakedBlocks, then header.edge_count (from, to) pairs of
// uint32 indices into the leaked blocks. Nothing follows. Both processes run the same build, so
// the layout is the compiler's (no versioning).
// Writer (snapshot process): pwrite only, no allocation; either the whole result or a header with
// an error. Reader (scanning process): the array lengths are checked against the file's size
// before anything is allocated and every edge index against the block count, so a short or
// garbled result (a snapshot killed while writing, a stray write) is an error, never a crash or an
// unbounded allocation. The leaked blocks are read through a small buffer into reserved vectors:
// the file is never mapped (a mapping would count its pages in the program's RSS).
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "scanner/ScanResult.h"

namespace heapgraph::scanner {

namespace ResultChannel {

inline constexpr uint64_t kMagic = 0x48475343414e3031ull;  // "HGSCAN01"

// What the snapshot process counted, for ScanResult::stats.
struct Totals {
  uint64_t live_blocks = 0;
  uint64_t live_bytes = 0;
  uint64_t root_ranges = 0;
  uint64_t root_bytes = 0;
  uint64_t heap_words = 0;
  uint64_t unreadable_pages = 0;
  uint64_t absent_pages = 0;
};

struct Header {
  uint64_t magic;
  uint64_t leaked_count;
  uint64_t edge_count;
  Totals totals;
  char error[224];  // empty on success; NUL-terminated when written here
};

using Edge = std::pair<uint32_t, uint32_t>;

// Snapshot process: the whole result into `fd` from offset 0. False if a write failed.
bool Write(int fd, const Totals& totals, std::span<const LeakedBlock> leaked,
           std::span<const Edge> edges);
// Snapshot process: a result that is only the error "<what>: <detail>" (": <detail>" when
// `detail` is not null), cut to fit. False if the write failed.
bool WriteError(int fd, const char* what, const char* detail = nullptr);

// Scanning process: result->leaked, edges and stats from `fd`; true on a complete result. Else
// false with result->error: the snapshot's error line, "the snapshot process wrote no result"
// (no header), "... a truncated result" (shorter than its counts say) or "... a garbled result"
// (counts that cannot be, bytes after the edges, an edge to no leaked block).
bool Read(int fd, ScanResult* result);

}  // namespace ResultChannel

}  // namespace heapgraph::scanner
