#include "scanner/SnapshotProcess.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <span>
#include <utility>
#include <vector>

#include "heap/store/LiveAllocationTree.h"
#include "roots/RawSyscall.h"
#include "roots/ThreadCapture.h"
#include "scanner/BlockCopy.h"
#include "scanner/BlockIndex.h"
#include "scanner/ExplainScan.h"
#include "scanner/HeapMarker.h"
#include "scanner/MallocHeaps.h"
#include "scanner/MmapAllocator.h"
#include "scanner/PagePool.h"
#include "scanner/PresentPages.h"
#include "scanner/QueuedFrees.h"
#include "scanner/ResultChannel.h"
#include "scanner/RootRanges.h"
#include "scanner/SharedMarking.h"
#include "scanner/TypedScan.h"
#include "scanner/UnreadablePages.h"

namespace heapgraph::scanner {
namespace {

// Sorts `items` by begin: an LSD radix sort over 8-bit digits through `scratch`. The digits start
// at the lowest bit in which the keys differ (malloc's 16-byte alignment leaves the low 4 bits
// equal) and a digit in which no key differs is skipped (heap addresses share their top bytes):
// 3 passes over a heap span of up to 256 MiB.
void RadixSortByBegin(MmapVector<BlockRange>& items, MmapVector<BlockRange>& scratch) {
  uint64_t all_or = 0, all_and = ~uint64_t{0};
  for (const BlockRange& r : items) {
    all_or |= r.begin;
    all_and &= r.begin;
  }
  const uint64_t differ = all_or ^ all_and;
  if (differ == 0) return;
  scratch.resize(items.size());
  for (int shift = __builtin_ctzll(differ); shift < 64; shift += 8) {
    if (((differ >> shift) & 0xff) == 0) continue;  // one value in every key
    size_t start[257] = {};
    for (const BlockRange& r : items) ++start[((r.begin >> shift) & 0xff) + 1];
    for (int b = 0; b < 256; ++b) start[b + 1] += start[b];
    for (const BlockRange& r : items) scratch[start[(r.begin >> shift) & 0xff]++] = r;
    items.swap(scratch);
  }
}

// The blocks' ranges in address order into `ranges`; returns order, with order[i] the index in
// `blocks` of ranges[i]. Sorts 16-byte (address, index) pairs, held in `ranges` itself (size
// stands for the index until the sizes are gathered), rather than the 40-byte blocks.
MmapVector<uint32_t> SortByAddress(std::span<const LeakedBlock> blocks,
                                   MmapVector<BlockRange>& ranges) {
  ranges.clear();
  ranges.reserve(blocks.size());
  for (uint32_t i = 0; i < blocks.size(); ++i) ranges.push_back({blocks[i].address, i});
  {
    MmapVector<BlockRange> scratch;
    RadixSortByBegin(ranges, scratch);
  }
  MmapVector<uint32_t> order;
  order.reserve(ranges.size());
  constexpr size_t kAhead = 16;  // the gather is random: prefetch the blocks a few steps ahead
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i + kAhead < ranges.size()) __builtin_prefetch(&blocks[ranges[i + kAhead].size]);
    auto index = static_cast<uint32_t>(ranges[i].size);
    order.push_back(index);
    ranges[i].size = blocks[index].size;
  }
  return order;
}

// The blocks of `unsorted` in the order `order` names: a gather into a new array (independent
// random reads, prefetched; several times faster than permuting in place, for a transient second
// copy). Keeps the invariant the rest of the snapshot relies on: blocks sorted by address, block
// i = index entry i.
MmapVector<LeakedBlock> Gather(std::span<const LeakedBlock> unsorted,
                               const MmapVector<uint32_t>& order) {
  MmapVector<LeakedBlock> sorted;
  sorted.reserve(unsorted.size());
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + kAhead < order.size()) __builtin_prefetch(&unsorted[order[i + kAhead]]);
    sorted.push_back(unsorted[order[i]]);
  }
  return sorted;
}

// Sorts `unsorted` by address into `*blocks` and returns their ranges: (*blocks)[i] is ranges[i]'s
// block. The order array is freed before the caller indexes the ranges.
MmapVector<BlockRange> SortBlocks(std::span<const LeakedBlock> unsorted,
                                  MmapVector<LeakedBlock>* blocks) {
  MmapVector<BlockRange> ranges;
  MmapVector<uint32_t> order = SortByAddress(unsorted, ranges);
  *blocks = Gather(unsorted, order);
  return ranges;
}

uint64_t TotalBytes(const MmapVector<BlockRange>& ranges) {
  uint64_t bytes = 0;
  for (const BlockRange& r : ranges) bytes += r.size;
  return bytes;
}

size_t CountUnmarked(const HeapMarker& marker, uint32_t blocks) {
  size_t count = 0;
  for (uint32_t i = 0; i < blocks; ++i) count += marker.marked(i) ? 0 : 1;
  return count;
}

// Writes the `count` unmarked blocks and the references among them (ResultChannel); sets
// leaked_index[i] to block i's index among the leaked ones. Their arrays are sized exactly and
// freed on return, for the typed scan to reuse. The pages that faulted so far (UnreadablePages,
// the edges' included) are added to `totals`.
bool WriteLeaks(int fd, std::span<const LeakedBlock> blocks, const HeapMarker& marker, size_t count,
                MmapVector<uint32_t>& leaked_index, ResultChannel::Totals totals) {
  MmapVector<LeakedBlock> leaked;
  leaked.reserve(count);
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    if (marker.marked(i)) continue;
    leaked_index[i] = static_cast<uint32_t>(leaked.size());
    leaked.push_back(blocks[i]);
  }
  MmapVector<ResultChannel::Edge> edges;
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    if (leaked_index[i] == UINT32_MAX) continue;
    marker.ForEachReference(i, [&](uint32_t j) {
      if (leaked_index[j] != UINT32_MAX) edges.push_back({leaked_index[i], leaked_index[j]});
    });
  }
  totals.unreadable_pages += UnreadablePages::Count();
  return ResultChannel::Write(fd, totals, leaked, edges);
}

// The page pool of the scans in place, kept from one to the next (a repeated check's arrays are
// then already faulted in; fresh pages were a quarter of such a check's time). Its extents hold
// the previous scan's arrays (addresses of blocks): every scan, in place or not, takes those it
// kept at its step 1 out of its map (never roots, never read). Used by the ptrace helper only,
// while every other thread is stopped, one scan at a time (the check lock); a snapshot process
// reads its copy's extents.
constinit PagePool g_in_place_pool;

// heapgraph's memory that may sit in mappings shared with the program's: the recorder's free-slot
// stacks (heap/store/FreeSlotStacks), the buffers prepared for this scan (the live blocks' copy
// included), the repeated checks' kept copy of the live blocks and the ptrace helper's stack (seen
// holding addresses of leaked blocks: 12 false "reachable" per check). Never roots.
std::array<std::pair<uint64_t, uint64_t>, 14> OwnBuffers(const SnapshotProcess::Context& c) {
  std::array<std::pair<uint64_t, uint64_t>, 14> own = {};
  own[0] = {c.view.heap->free_slots().begin(), c.view.heap->free_slots().end()};
  own[12] = c.copy_range;       // the live blocks' copy of the scanning process
  own[13] = c.kept_copy_range;  // the previous check's addresses, when not this scan's copy
  auto maps = c.mappings->BufferRanges();
  auto capture = c.capture->BufferRanges();
  std::copy(maps.begin(), maps.end(), own.begin() + 1);
  std::copy(capture.begin(), capture.end(), own.begin() + 1 + maps.size());
  if (c.mappings_after_fault != nullptr) {
    auto after = c.mappings_after_fault->BufferRanges();
    std::copy(after.begin(), after.end(), own.begin() + 1 + maps.size() + capture.size());
  }
  return own;
}

// The writable segments of libheapgraph.so (HeapgraphRecorderView::own_data), the first
// kMaxOwnData of them, in the form Exclude takes.
constexpr size_t kMaxOwnData = 8;
struct OwnDataRanges {
  std::array<std::pair<uint64_t, uint64_t>, kMaxOwnData> ranges{};
  size_t count = 0;

  explicit OwnDataRanges(const HeapgraphRecorderView& view) {
    for (int i = 0; view.own_data != nullptr && i < view.own_data_ranges && count < kMaxOwnData;
         ++i) {
      ranges[count++] = {view.own_data[i].begin, view.own_data[i].end};
    }
  }
  std::span<const std::pair<uint64_t, uint64_t>> span() const { return {ranges.data(), count}; }
};

}  // namespace

int SnapshotProcess::Entry(void* context) {
  PagePool pool;
  return SnapshotProcess(*static_cast<const Context*>(context)).Run(pool);
}

int SnapshotProcess::InPlace(void* context) {
  auto* c = static_cast<Context*>(context);
  static sigjmp_buf jump;  // one scan at a time in a process (the check lock)
  SnapshotProcess process(*c);
  process.fault_jump_ = &jump;
  if (sigsetjmp(jump, 1) != 0) {
    process.UndoAfterFault();
    c->in_place_faulted = true;
    c->in_place = false;  // the snapshot process the helper makes next reads its copy
    PagePool::Activate(nullptr);
    return roots::ThreadCapture::kNeedsCopy;
  }
  const int status = process.Run(g_in_place_pool);
  g_in_place_pool.TrimToPeak();  // every array was given back: kept for the next check
  PagePool::Activate(nullptr);
  return status;
}

// Every range mapped now and not at step 1 was mapped by this scan (every thread is stopped and
// the scanning thread waits): unmapped. A new mapping merged with an older neighbour shows as a
// longer range; only the part beyond the old one goes.
void SnapshotProcess::UndoAfterFault() {
  if (kept_fd_ >= 0) roots::RawSyscall::Close(kept_fd_);
  // The kept pool goes too (every later check makes a snapshot process): its extents at step 1,
  // some of them in use now, and those it keeps now (the ones mapped since go below anyway).
  for (const auto& [begin, end] : kept_at_start_) {
    if (begin < end) syscall(SYS_munmap, begin, end - begin);
  }
  g_in_place_pool.Release();
  roots::ProcessMappings* after = c_.mappings_after_fault;
  if (after == nullptr || !after->ReadWithoutAllocating()) return;
  std::span<const roots::ProcessMappings::Mapping> before = c_.mappings->mappings();
  for (const roots::ProcessMappings::Mapping& m : after->mappings()) {
    uintptr_t from = m.start;
    for (const roots::ProcessMappings::Mapping& old : before) {
      if (old.end <= from || old.start >= m.end) continue;
      if (old.start > from) syscall(SYS_munmap, from, old.start - from);
      from = std::max(from, old.end);
    }
    if (from < m.end) syscall(SYS_munmap, from, m.end - from);
  }
}

int SnapshotProcess::Run(PagePool& pool) {
  bool maps_ok = c_.mappings->ReadWithoutAllocating();  // step 1
  // The kept pool is not the program's: out of the map, so never a root nor read (the scan may
  // move or unmap its extents before the roots are read).
  kept_at_start_ = g_in_place_pool.Ranges();
  maps_ok = maps_ok && c_.mappings->Cut(kept_at_start_);
  // Every array from here on reuses the pages of those freed before it (a fresh page costs the
  // kernel's zeroing). Only this process's own arrays are ever given back: none was a root.
  PagePool::Activate(&pool);
  // The scanning process's copy, made under the locks; else this process copies the tree now.
  MmapVector<LeakedBlock> own_copy;
  std::span<const LeakedBlock> unsorted = c_.copied_blocks;
  const bool copied = c_.published_copy != nullptr ? c_.published_copy->AwaitPublished(&unsorted)
                                                   : c_.blocks_copied;
  if (!copied) {
    own_copy = BlockCopy::Copy(*c_.view.heap);
    unsorted = own_copy;
    if (!c_.hold_allocations_while_marking) ReleaseRecorder();
  }
  MmapVector<LeakedBlock> blocks;
  MmapVector<BlockRange> ranges = SortBlocks(unsorted, &blocks);  // blocks[i] is ranges[i]'s block
  MmapVector<LeakedBlock>().swap(own_copy);
  // Freed by the program, not yet by the recorder: as if their frees were applied.
  QueuedFrees::Drop(QueuedFrees::Read(c_.view), &blocks, &ranges);
  uint64_t live_bytes = TotalBytes(ranges);
  BlockIndex index(std::move(ranges));
  if (!maps_ok) return Fail("cannot read /proc/self/maps", c_.mappings->error());
  // From here on a page of the program's that faults (PROT_NONE or guard page in a block or a
  // root, a page past a truncated file's end) is made readable and counted, in this process and
  // its clones (the marking helper); in place it ends the helper task instead.
  if (c_.in_place) {
    UnreadablePages::InstallJump(fault_jump_);
  } else {
    UnreadablePages::Install(*c_.mappings, index);
  }
  PresentPages pages(*c_.mappings);  // never-written anonymous pages are skipped unread
  kept_fd_ = pages.fd();
  RootRanges roots = ComputeRoots(index, blocks, pages);
  const int status = MarkAndWrite(blocks, index, live_bytes, roots, pages, pool);
  kept_fd_ = -1;  // closed with `pages`
  return status;
}

int SnapshotProcess::MarkAndWrite(std::span<const LeakedBlock> blocks, const BlockIndex& index,
                                  uint64_t live_bytes, const RootRanges& roots, PresentPages& pages,
                                  PagePool& pool) {
  SharedMarking marking(index, c_.interior_pointers, &pages);
  if (c_.in_place) marking.MarkAlone();
  if (!marking.Map()) return Fail("cannot map the mark array", strerror(errno));
  // Ignored blocks are never leaked: marked before marking (their contents are roots, added by
  // ComputeRoots), so nothing they point to is leaked either, as with LeakSanitizer.
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].ignored) marking.marks()[i] = 1;
  }
  // Typing only on leaks: not shared with the marking helper (it would type before the count).
  if (c_.readers != nullptr && !c_.types_only_if_leaked) {
    marking.ShareTyping(*c_.readers, *c_.mappings);
  }
  if (!marking.Mark(roots, c_.capture->threads())) return Fail("the marking helper process died");
  if (c_.hold_allocations_while_marking) ReleaseRecorder();
  // Reads the final marks; the edges.
  HeapMarker marker(index, c_.interior_pointers, marking.marks(), &pages);

  MmapVector<uint32_t> leaked_index(blocks.size(), UINT32_MAX);
  const ResultChannel::Totals totals = {blocks.size(),
                                        live_bytes,
                                        roots.ranges().size(),
                                        roots.total_bytes(),
                                        marking.stats().heap_words,
                                        marking.stats().unreadable_pages,  // + faults: WriteLeaks
                                        roots.absent_pages() + marking.stats().absent_pages};
  size_t count = CountUnmarked(marker, index.size());
  // Kept for what follows: the leaked list, then the typed scan's per-block index and lists. In
  // place the pool is kept for the next check whole (InPlace trims it to this scan's peak).
  if (!c_.in_place) {
    pool.Trim(count * sizeof(LeakedBlock) + blocks.size() * sizeof(uint32_t) + (1u << 20));
  }
  bool ok = WriteLeaks(c_.result_fd, blocks, marker, count, leaked_index, totals);
  if (ok && c_.explain != nullptr) {
    const RootContext root_context = {roots,
                                      c_.capture->threads(),
                                      c_.static_tls_size,
                                      c_.tcb_size,
                                      c_.readers != nullptr ? &c_.readers->modules() : nullptr,
                                      c_.mappings};
    // A failed write leaves no explanation: the parent says so, the leak result stands.
    (void)ExplainScan::WriteTo(c_.explain_fd,
                               {index, marker, blocks, root_context, c_.view.stacks, *c_.explain});
  }
  if (ok && c_.readers != nullptr && !(c_.types_only_if_leaked && count == 0)) {
    marking.FinishTyping();
    TypedScan::WriteTo(c_.types_fd, {index, marker, blocks, leaked_index, *c_.readers, *c_.mappings,
                                     roots, c_.capture->threads(), c_.static_tls_size,
                                     marking.identities(), c_.tcb_size});
  } else {
    marking.AwaitHelper();
  }
  return ok ? 0 : 4;
}

void SnapshotProcess::ReleaseRecorder() const {
  if (c_.in_place) return;  // the world is stopped until the end; the descriptors are shared
  char one = 1;
  (void)!write(c_.ready_fd, &one, 1);  // the copy is ours: the program may allocate again
  close(c_.ready_fd);
}

RootRanges SnapshotProcess::ComputeRoots(const BlockIndex& index,
                                         std::span<const LeakedBlock> blocks,
                                         PresentPages& pages) const {
  RootRanges roots;
  const uint64_t own[] = {reinterpret_cast<uint64_t>(c_.capture->threads().data()),
                          c_.scan_stack_pointer};
  roots.Compute(*c_.mappings, c_.capture->threads(), index, c_.caller_stack_pointer, own,
                c_.static_tls_size);
  const auto own_buffers = OwnBuffers(c_);
  roots.Exclude(own_buffers);
  roots.Exclude(OwnDataRanges(c_.view).span());
  // malloc's memory: reached through blocks only.
  roots.Exclude(MallocHeaps::Find(*c_.mappings, own_buffers));
  if (c_.view.unwinder != nullptr) roots.ExcludeUnwinderMemory(*c_.view.unwinder, *c_.mappings);
  roots.ExcludeThreadState({c_.view.thread_state_offset, c_.view.thread_state_size},
                           c_.capture->threads(), c_.static_tls_size);
  if (c_.view.check_entrants != nullptr) {
    roots.ExcludeWaitingCheckFrames(
        {c_.view.check_entrants, static_cast<size_t>(c_.view.check_entrant_slots)},
        c_.capture->threads(), *c_.mappings);
  }
  roots.AddProgramRoots(blocks, c_.view.root_regions, c_.view.root_region_slots, *c_.mappings);
  roots.SkipAbsentPages(pages);
  return roots;
}

int SnapshotProcess::Fail(const char* what, const char* detail) const {
  ResultChannel::WriteError(c_.result_fd, what, detail);
  return 3;
}

}  // namespace heapgraph::scanner
