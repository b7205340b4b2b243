// scanner/: the memory ranges a leak scan treats as roots, from the process's mappings and its
// stopped threads (libmemunreachable's rule): every thread's stack from SP minus the red zone to
// the top of its mapping (never the dead frames below), and every other private writable mapping
// that holds no heap block (module .data/.bss, TLS blocks, anonymous mmap memory). Mappings that
// hold a block are heap: they are reached through their blocks only. Shared mappings (heapgraph's
// own recording files among them) and the brk heap are never roots. No host malloc.
// A thread whose SP lies outside its own stack (roots::ThreadStacks::OwnStack: "[stack]" for the
// main thread) runs a sigaltstack handler or a swapcontext fiber: the range around its SP is
// scanned (only within the heap block holding SP, for a malloc'd stack), and its own stack whole,
// as LeakSanitizer does (its frames below the SP it will return to are dead but unknown).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "heap/platform/StaticTlsArea.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/runtime/UnwinderMappings.h"
#include "roots/ProcessMappings.h"
#include "roots/ThreadInfo.h"
#include "scanner/BlockIndex.h"
#include "scanner/MmapAllocator.h"
#include "scanner/PresentPages.h"

namespace heapgraph::scanner {

struct RootRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool thread_stack = false;
  // Private anonymous memory (stacks included): read with plain loads (in the snapshot process,
  // scanner/UnreadablePages turns a guard page there into zeros). File-backed ranges may hold
  // pages past the file's end (SIGBUS) and are read with process_vm_readv, which also skips
  // unreadable pages.
  bool direct = false;
};

class RootRanges {
 public:
  // `caller_stack_pointer` replaces the captured SP of the thread that runs the scan (is_caller):
  // its stack is scanned from there to the top of the mapping holding it (the scan may run on
  // another stack), and its own stack whole when that is another mapping. Mappings containing any
  // address of `own_memory` are heapgraph's (the capture arena, the scan's own stack) and never
  // roots, unless they hold caller_stack_pointer. `static_tls_size`: glibc's static TLS size
  // including the thread control block (_dl_get_tls_static_info); 0 if unknown. A mapping with no
  // live thread in it whose top holds a thread control block is the cached stack of an exited
  // thread (glibc keeps them mapped): only that top part (TCB, static TLS, DTV pointer) is a root,
  // never its dead frames.
  // glibc's static TLS size, thread control block included (_dl_get_tls_static_info, GLIBC_PRIVATE,
  // as LeakSanitizer uses it): Compute's `static_tls_size`. 0 if unknown.
  static uint64_t StaticTlsSize();
  void Compute(const roots::ProcessMappings& mappings, std::span<const roots::ThreadInfo> threads,
               const BlockIndex& blocks, uint64_t caller_stack_pointer,
               std::span<const uint64_t> own_memory, uint64_t static_tls_size);
  // Removes [begin, end) of each of `own` from the ranges (cutting a range in two where needed):
  // heapgraph's own memory that shares no mapping boundary with the program's, e.g. the
  // recorder's scratch or a buffer the scan prepared, which may lie in a mapping the kernel
  // merged with one of the program's.
  // O((ranges + own) log own).
  void Exclude(std::span<const std::pair<uint64_t, uint64_t>> own);
  // Removes the memory heapgraph's unwinder mapped for itself (the rule walk's table,
  // heap/runtime/UnwinderMappings.h). Only the parts of each entry that `mappings` shows as
  // private anonymous memory are removed: an entry is never trusted beyond what the kernel shows.
  void ExcludeUnwinderMemory(const UnwinderMappings& unwinder,
                             const roots::ProcessMappings& mappings);
  // Removes the recorder's per-thread state (`area`, heap/platform/StaticTlsArea.h) from every
  // thread whose thread pointer is known: each of `threads` (x86-64: fs_base) and each cached stack
  // of an exited thread that Compute found. An area is cut only where it lies wholly inside that
  // thread's static TLS (x86-64: the static_tls_size bytes below the thread pointer; aarch64:
  // above it), so the program's own thread-locals stay roots. static_tls_size 0: nothing is cut.
  void ExcludeThreadState(const StaticTlsArea& area, std::span<const roots::ThreadInfo> threads,
                          uint64_t static_tls_size);
  // Removes, from each thread listed in `entrants` as inside a check call (heap/runtime/
  // CheckEntrants: waiting for the check lock, or on its way in or out), its frames from SP minus
  // the red zone up to the program's frame that asked for the check: they are heapgraph's, and
  // their unwritten slots hold whatever earlier calls (the recorder's hooks, a signal frame) left
  // there. Cut only when that frame lies above SP on the same mapping.
  void ExcludeWaitingCheckFrames(std::span<const HeapgraphCheckEntrant> entrants,
                                 std::span<const roots::ThreadInfo> threads,
                                 const roots::ProcessMappings& mappings);
  // Adds the program's own roots besides its memory: the contents of every ignored block of
  // `blocks` (read directly, like any block), the parts of each registered root region
  // (`regions`, `slots` slots; heap/plugin/ScanInterface.h) that `mappings` shows readable (read
  // with process_vm_readv), and the table of regions itself: it holds the addresses the program
  // registered, so a block that holds a region stays reachable through its registration, as it
  // did while libheapgraph.so's data was a root. Call after every Exclude: these are roots
  // wherever they lie.
  template <typename Blocks>
  void AddProgramRoots(const Blocks& blocks, const HeapgraphRootRegion* regions, int slots,
                       const roots::ProcessMappings& mappings);
  // Cuts out of the ranges the pages that `pages` says need no reading (private anonymous memory
  // that exists neither in memory nor in swap: zeros), e.g. the untouched bulk of a MAP_NORESERVE
  // reservation. Thread stacks are kept whole (used above SP; TypedScan names a stack's thread by
  // its range). Call last: the ranges keep only what is read.
  void SkipAbsentPages(PresentPages& pages);
  std::span<const RootRange> ranges() const { return ranges_; }
  uint64_t total_bytes() const;
  // Pages SkipAbsentPages cut out.
  uint64_t absent_pages() const { return absent_pages_; }

 private:
  static bool HoldsBlock(const roots::ProcessMappings::Mapping& m, const BlockIndex& blocks);
  // A stack the program allocated as a heap block (a malloc'd sigaltstack or fiber stack) is
  // scanned within that block only: [*begin, *end) is cut to the block holding `stack_pointer`,
  // if any; the blocks above it are heap, reached only through pointers to them.
  static void ClipToBlock(uint64_t stack_pointer, const BlockIndex& blocks, uint64_t* begin,
                          uint64_t* end);
  // The start of the part of `m` to scan: m.start, or the top part of a dead thread stack.
  // `live_tcbs`: the control blocks of live threads (pthread_self(), fs_base on x86-64): a mapping
  // whose top holds one of them is no cached stack (the main thread's TLS lives in a mapping of
  // ld.so's, which the kernel may have merged with the program's anonymous memory below it).
  // `cached_tcb` receives the control block of the exited thread whose top part is kept, or 0.
  static uint64_t LiveStart(const roots::ProcessMappings::Mapping& m, uint64_t static_tls_size,
                            std::span<const uint64_t> live_tcbs, uint64_t* cached_tcb);
  // The thread pointer's side of it: [tp - static_tls_size, tp) on x86-64, [tp, tp + size) on
  // aarch64.
  static bool InStaticTls(uint64_t begin, uint64_t end, uint64_t thread_pointer,
                          uint64_t static_tls_size);

  std::vector<RootRange, MmapAllocator<RootRange>> ranges_;
  // Thread pointers of the exited threads whose cached stacks' tops are roots.
  std::vector<uint64_t, MmapAllocator<uint64_t>> cached_tcbs_;
  uint64_t absent_pages_ = 0;
};

template <typename Blocks>
void RootRanges::AddProgramRoots(const Blocks& blocks, const HeapgraphRootRegion* regions,
                                 int slots, const roots::ProcessMappings& mappings) {
  for (const auto& b : blocks) {
    if (b.ignored && b.size != 0) ranges_.push_back({b.address, b.address + b.size, false, true});
  }
  if (regions != nullptr && slots > 0) {
    const auto table = reinterpret_cast<uint64_t>(regions);
    ranges_.push_back(
        {table, table + static_cast<uint64_t>(slots) * sizeof(*regions), false, true});
  }
  for (int i = 0; regions != nullptr && i < slots; ++i) {
    const uint64_t begin = regions[i].begin, end = begin + regions[i].size;
    if (begin == 0 || end <= begin) continue;
    for (const roots::ProcessMappings::Mapping& m : mappings.mappings()) {
      const uint64_t lo = std::max<uint64_t>(begin, m.start), hi = std::min<uint64_t>(end, m.end);
      if (m.readable && lo < hi) ranges_.push_back({lo, hi, false, false});
    }
  }
}

}  // namespace heapgraph::scanner
