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
//
// A shared copy (Reserve(n, true): MAP_SHARED memory) may be written after the snapshot process
// was cloned, while the ptrace helper stops the threads and clones (ThreadCapture::Overlap): the
// snapshot sees the same pages and waits for Publish() (AwaitPublished) before it reads them. So
// the allocations wait for the longer of the copy and the stop, not for both (issue 14, "the
// pause the program feels"). Only a copy that is not kept between checks is shared: a kept one
// would be shared with a child the program forks later.
#pragma once

#include <atomic>
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

  // Before the recorder is locked: room for `live_blocks`, a quarter more and 1,024 (blocks
  // allocated meanwhile); the pages of `live_blocks`, a quarter more and kWrittenSlack written
  // once (MAP_POPULATE left the first writes slow), so that the copy under the locks takes no
  // page fault unless the heap grew past that; the rest of the room is written only if used (a
  // small program's check spared 7 page faults: docs/performance.md, session 33). The memory
  // already held is kept when it has that room (an eighth more at least) and is not four times
  // too large. False (no room) if the memory cannot be mapped.
  // `shared`: MAP_SHARED memory (see above); memory of the other kind is not kept.
  bool Reserve(uint64_t live_blocks, bool shared = false);
  // Before the recorder is locked, instead of Reserve: keeps the memory of the previous copy if
  // that copy fit and used a quarter of it at least (the heap has not shrunk much); the copy under
  // the locks then says whether it still fits. False (nothing kept: Reserve) otherwise.
  bool ReuseIfItFit();
  // Under the recorder's locks: every live block of `tree`, in slot order. False, with nothing
  // copied, when they do not fit (the heap grew past the reserve): the snapshot copies them.
  bool CopyFrom(LiveAllocationTree& tree);
  // After CopyFrom: says in the copy's own memory whether it holds the blocks, and how many.
  void Publish();
  // In the snapshot process, on its view of a shared copy: waits until the scanning process
  // published it (polling every 50 us, at most kPublishWaitNs), then sets *blocks and returns
  // whether the blocks are there; false (copy them yourself) when they did not fit or never came.
  // Raw system calls only.
  bool AwaitPublished(std::span<const LeakedBlock>* blocks) const;
  static constexpr int64_t kPublishWaitNs = 30'000'000'000;

  // Unmaps the memory (a snapshot process keeps its own mapping of it: a copy on write, or the
  // same pages when shared); also the destructor's.
  void Unmap();

  std::span<const LeakedBlock> blocks() const { return {slots_, count_}; }
  bool copied() const { return copied_; }
  bool shared() const { return shared_; }
  // The mapping, never a root ({0, 0} when none).
  std::pair<uint64_t, uint64_t> Range() const;

  // The snapshot's own copy (under the locks, into fresh pages), when the scanning process made
  // none.
  static MmapVector<LeakedBlock> Copy(LiveAllocationTree& tree);

 private:
  // The first bytes of the mapping; the slots start a cache line further.
  struct Header {
    std::atomic<uint32_t> state;  // kCopying, kCopied or kNotCopied
    uint64_t count;
  };
  static constexpr uint32_t kCopying = 0, kCopied = 1, kNotCopied = 2;
  static constexpr uint64_t kHeaderBytes = 64;
  static constexpr uint64_t kWrittenSlack = 128;  // blocks beyond a quarter more: 4 KiB

  Header* header_ = nullptr;
  bool shared_ = false;
  LeakedBlock* slots_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
  uint64_t written_ = 0;  // the pages below this offset were written (a multiple of the page size)
  bool copied_ = false;

  bool Map(uint64_t capacity, bool shared);
  // Writes once each page not written yet up to the slot after `blocks` blocks (within the
  // mapping).
  void WritePages(uint64_t blocks);
};

}  // namespace heapgraph::scanner
