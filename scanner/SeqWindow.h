// scanner/: the allocation-sequence window of a delta check (heapgraph_check_leaks_since): the
// blocks allocated from a checkpoint's sequence up to the check's. Marking is never limited (every
// root, every block); only the leaked candidates are, after the scan (LimitToWindow). Sequence
// numbers are the low 32 bits of the recorder's counter, so the window is compared modulo 2^32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scanner/ScanResult.h"

namespace heapgraph::scanner {

struct SeqWindow {
  std::string checkpoint;  // the checkpoint's name, as the report prints it
  uint64_t from_seq = 0;   // first sequence inside
  uint64_t to_seq = 0;     // first sequence after the window

  bool Contains(uint32_t seq) const {
    return static_cast<uint32_t>(seq - static_cast<uint32_t>(from_seq)) <
           static_cast<uint32_t>(to_seq - from_seq);
  }
};

// Keeps the leaked blocks i of `result` with keep[i], in order, and renumbers the references among
// them and the typed objects' leaked indices (a dropped block's typed object is no longer
// leaked). Returns how many were kept.
size_t KeepLeaked(ScanResult& result, const std::vector<bool>& keep);

// KeepLeaked with the blocks inside `window`.
size_t LimitToWindow(ScanResult& result, const SeqWindow& window);

// How many blocks of the recorder's live tree are inside `window` (the tree locked for the count,
// no thread stopped: well under a millisecond for thousands of blocks), or in the whole tree when
// `window` is null (its count alone, no pass over the blocks). `unscanned` gets the tree's live
// blocks and bytes (stats) and the recorder's report options (TakeReportOptions). None live:
// nothing in the window can have leaked, and the scan can be skipped. -1 when the recorder is not
// there, not recording, or records a sample (the scan says why it refuses).
int64_t LiveBlocksInWindow(const SeqWindow* window, ScanResult* unscanned);

}  // namespace heapgraph::scanner
