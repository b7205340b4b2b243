// scanner/: the snapshot process of a leak scan (scanner/LeakScan.h): what runs in the fork-like
// clone of the stopped world that roots/ThreadCapture::CloneStoppedWorld makes. It has its own
// copy of the address space as it was while every thread was stopped, runs single-threaded on a
// copy of the ptrace helper's stack, never calls the host's malloc (MmapAllocator over a PagePool:
// every array reuses the pages of those freed before it) and never returns (_exit). Steps:
//   1. read the process map, before mapping anything of its own: the scan's arrays hold the
//      address of every block and must never be a root;
//   2. copy the live blocks out of the recorder's locked tree, then write one byte on `ready_fd`:
//      the scanning process may release the recorder (allocations resume);
//   3. sort the copies by address and index them (BlockIndex);
//   4. compute the roots (RootRanges), without heapgraph's own memory, malloc's thread heaps
//      (MallocHeaps) nor the pages of private
//      anonymous memory that do not exist (scanner/PresentPages.h: never written, zeros); from
//      here on a page of the program's that faults when read is made readable and counted
//      (scanner/UnreadablePages.h);
//   5. mark, with the marking helper (scanner/SharedMarking.h);
//   6. write the unmarked blocks and the references among them to `result_fd`
//      (scanner/ResultChannel.h);
//   7. when the scan has explain targets: their chains (scanner/ExplainScan.h) to `explain_fd`;
//   8. when typing: the blocks' type identities (half of them by the helper) and the typed scan
//      (scanner/TypedScan.h) to `types_fd`.
// Exit status 0: done; 3: an error line was written to `result_fd` instead; 4: writing the result
// failed. Killed during step 8, it leaves a complete leak result: the types are lost, not the
// check.
#pragma once

#include <setjmp.h>

#include <array>
#include <cstdint>
#include <span>
#include <utility>

#include "heap/plugin/ScanInterface.h"
#include "roots/ProcessMappings.h"
#include "roots/ThreadCapture.h"
#include "scanner/ExplainScanResult.h"
#include "scanner/PagePool.h"
#include "scanner/ScanResult.h"
#include "scanner/types/ReaderSet.h"

namespace heapgraph::scanner {

class BlockCopy;
class BlockIndex;
class PresentPages;
class RootRanges;

class SnapshotProcess {
 public:
  // Set up by the scanning process before the world stops; the snapshot reads its copy.
  struct Context {
    HeapgraphRecorderView view{};   // filled by heapgraph_internal_begin_snapshot
    uint64_t caller_stack_pointer;  // the program's frames of the scanning thread are above it
    uint64_t scan_stack_pointer;    // where the scan itself runs (skipped if on a stack of its own)
    uint64_t static_tls_size;       // glibc's, TCB included; 0 if unknown
    uint64_t tcb_size;              // glibc's sizeof(struct pthread); 0 if unknown
    const roots::ThreadCapture* capture;
    roots::ProcessMappings* mappings;  // reserved: read without allocating
    bool interior_pointers;
    int ready_fd;   // one byte once the blocks are copied: the parent may release the recorder
    int result_fd;  // memfd (ResultChannel)
    const types::ReaderSet* readers;      // prepared; nullptr: no typing
    int types_fd;                         // memfd for TypedScan
    bool types_only_if_leaked;            // no typed pass (nothing in types_fd) when nothing leaked
    bool hold_allocations_while_marking;  // the ready byte after the marking, not the copy
    // The live blocks as the scanning process copied them under the recorder's locks (BlockCopy),
    // and that memory (never a root); when !blocks_copied the snapshot copies the tree itself,
    // then sends the ready byte (unless it holds allocations while marking).
    bool blocks_copied;
    std::span<const LeakedBlock> copied_blocks;
    // Non-null: the copy is shared memory written beside the stop, maybe after this process was
    // cloned; blocks_copied and copied_blocks are then read from it (BlockCopy::AwaitPublished).
    const BlockCopy* published_copy;
    std::pair<uint64_t, uint64_t> copy_range;
    std::pair<uint64_t, uint64_t> kept_copy_range;  // the repeated checks' kept copy: never a root
    const ExplainRequest* explain;                  // nullptr: nothing to explain
    int explain_fd;                                 // memfd for ExplainScan
    bool in_place;                                  // run by InPlace (set by the scanning process)
    // InPlace only: reserved for reading the map again after a fault, and set when one happened
    // (the scan was abandoned; the snapshot process makes it).
    roots::ProcessMappings* mappings_after_fault;
    bool in_place_faulted;
  };

  // The snapshot's body (roots::ThreadCapture::SnapshotBody) in the snapshot process; `context`
  // is a Context. Returns the exit status.
  static int Entry(void* context);

  // The same steps in place (roots::ThreadCapture::InPlace): in the program's own memory, run by
  // the ptrace helper while every thread stays stopped, for repeated checks (no snapshot process:
  // no copy-on-write fault for the program's threads afterwards). Differences: no ready byte (the
  // world is stopped until the end, the scanning process releases the recorder afterwards), no
  // marking helper (its fork-like clone would give every page a copy-on-write mapping again),
  // every descriptor is closed before returning, and every array is given back to a page pool
  // kept for the next scan in place (trimmed to this scan's peak; every scan cuts the pool's
  // extents out of its map: never roots). A page that faults when read abandons the scan
  // (UnreadablePages::InstallJump), since only a snapshot may change the protections of the
  // program's pages to read them: every mapping made since step 1 and the kept pool are unmapped
  // (the map read again, minus step 1's), the pagemap descriptor closed, `in_place_faulted` set,
  // and kNeedsCopy returned: the helper then makes the snapshot process from the same stop.
  // Else returns the status Entry's process would have exited with.
  static int InPlace(void* context);

 private:
  explicit SnapshotProcess(const Context& context) : c_(context) {}

  // Steps 1 to 8 with `pool` activated for every array.
  int Run(PagePool& pool);
  // After a fault in place: unmaps what this scan mapped, closes the descriptor it kept.
  void UndoAfterFault();
  // Steps 5 to 7 over the sorted, indexed blocks (`pool`: step 1's page pool).
  int MarkAndWrite(std::span<const LeakedBlock> blocks, const BlockIndex& index,
                   uint64_t live_bytes, const RootRanges& roots, PresentPages& pages,
                   PagePool& pool);
  // Step 2's signal (none in place).
  void ReleaseRecorder() const;
  // Step 4, with the program's ignored blocks (of `blocks`) and root regions; the absent pages
  // `pages` names are cut out last.
  RootRanges ComputeRoots(const BlockIndex& index, std::span<const LeakedBlock> blocks,
                          PresentPages& pages) const;
  // The error line "<what>[: <detail>]" instead of a result; returns exit status 3.
  int Fail(const char* what, const char* detail = nullptr) const;

  const Context& c_;
  int kept_fd_ = -1;                  // PresentPages' pagemap descriptor, while open
  sigjmp_buf* fault_jump_ = nullptr;  // InPlace's
  // The kept pool of the scans in place (SnapshotProcess.cc) as step 1 saw it: cut out of the map.
  std::array<std::pair<uint64_t, uint64_t>, PagePool::kMaxExtents> kept_at_start_ = {};
};

}  // namespace heapgraph::scanner
