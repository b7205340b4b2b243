// scanner/: the live blocks copied out of the recorder's tree by the scanning process itself,
// while it holds the recorder's locks, into memory it mapped and wrote before taking them. The
// snapshot (process, or scan in place) reads that copy, so the recorder is released as soon as
// the world is: allocating threads no longer wait while the snapshot process copies the tree into
// fresh pages (each a page fault: 0.2-0.5 s for 1M blocks on a loaded 2-core machine, all of it
// with every allocation waiting; docs/performance.md, issue 14, "The pause the program feels").
// Raw system calls only; the memory holds every block's address, so RootRanges never takes it
// for a root (Range()). Also the snapshot's own copy when the scanning process made none.
// Repeated checks keep one BlockCopy from one check to the next (scanner/LeakScan.cc): its pages
// stay faulted in (a fresh mapping, its first writes and its unmapping cost every check ~2 MB of
// page faults for 40,000 blocks), and while it fits no glance at the recorder sizes it.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "scanner/MmapAllocator.h"
#include "scanner/ScanResult.h"

namespace heapgraph {
class LiveAllocationTree;
}

namespace heapgraph::scanner {

class BlockCopy {
 public:
  BlockCopy() = default;
  ~BlockCopy();
  BlockCopy(const BlockCopy&) = delete;
  BlockCopy& operator=(const BlockCopy&) = delete;

  // Before the recorder is locked: room for `live_blocks` and a quarter more (blocks allocated
  // meanwhile), every page written once. The memory already held is kept when it has that room
  // (an eighth more at least) and is not four times too large. False (no room) if the memory
  // cannot be mapped.
  bool Reserve(uint64_t live_blocks);
  // Before the recorder is locked, instead of Reserve: keeps the memory of the previous copy if
  // that copy fit and used a quarter of it at least (the heap has not shrunk much); the copy under
  // the locks then says whether it still fits. False (nothing kept: Reserve) otherwise.
  bool ReuseIfItFit();
  // Under the recorder's locks: every live block of `tree`, in slot order. False, with nothing
  // copied, when they do not fit (the heap grew past the reserve): the snapshot copies them.
  bool CopyFrom(LiveAllocationTree& tree);

  // Unmaps the memory (a snapshot process has its own copy of it); also the destructor's.
  void Unmap();

  std::span<const LeakedBlock> blocks() const { return {slots_, count_}; }
  bool copied() const { return copied_; }
  // The mapping, never a root ({0, 0} when none).
  std::pair<uint64_t, uint64_t> Range() const;

  // The snapshot's own copy (under the locks, into fresh pages), when the scanning process made
  // none.
  static MmapVector<LeakedBlock> Copy(LiveAllocationTree& tree);

 private:
  LeakedBlock* slots_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
  bool copied_ = false;

  bool Map(uint64_t capacity);
};

}  // namespace heapgraph::scanner
