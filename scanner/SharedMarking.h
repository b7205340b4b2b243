// scanner/: the snapshot process's marking (scanner/SnapshotProcess.h) on two cores. A fork-like
// clone of the snapshot process, the marking helper, takes every second root (the registers of
// every second thread, 1 MiB pieces of the root ranges dealt round-robin) and the snapshot process
// the others; both set marks in one MAP_SHARED byte array (HeapMarker's shared marks: each block
// is scanned by exactly one of them) and propagate. The helper then says on a pipe that its marks
// are final, leaves its statistics in the shared mapping, does its share of the typing if one was
// given (the own identities, ReaderSet::IdentifyRange, of blocks [half, end) into a MAP_SHARED
// array; independent per block) and exits. If the helper cannot be cloned, the snapshot process
// marks alone. The scanning thread's registers are never roots: it is inside a call, so by the
// ABI every value of the program's that is live across that call sits in the frames above its
// stack pointer. With PresentPages, both processes read only the existing pages of large blocks
// (HeapMarker); its pages absent from the roots were cut out before (RootRanges::SkipAbsentPages).
// Snapshot process only (single-threaded): raw syscalls (the interposed mmap would record into
// the scanning process's VM tree), no host malloc. Map() after the process map was read, so the
// shared mappings are never roots.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>

#include "roots/ProcessMappings.h"
#include "roots/ThreadInfo.h"
#include "scanner/BlockIndex.h"
#include "scanner/HeapMarker.h"
#include "scanner/PresentPages.h"
#include "scanner/RootRanges.h"
#include "scanner/types/ReaderSet.h"

namespace heapgraph::scanner {

class SharedMarking {
 public:
  // `pages`, if given, must outlive this object.
  SharedMarking(const BlockIndex& index, bool interior_pointers, PresentPages* pages = nullptr)
      : index_(index), interior_(interior_pointers), pages_(pages) {}
  SharedMarking(const SharedMarking&) = delete;
  SharedMarking& operator=(const SharedMarking&) = delete;
  ~SharedMarking();  // unmaps the marks and the typing share (waits for the helper first)

  // No helper process: this process marks (and types) alone. For a scan done in the program's
  // own memory (SnapshotProcess in place), where a fork-like helper would give every page of the
  // program a copy-on-write mapping again.
  void MarkAlone() { alone_ = true; }

  // Maps the mark array (one byte per block) and the helper's statistics. False, errno set, if
  // it cannot.
  bool Map();
  // Gives the helper a typing share (before Mark): one MAP_SHARED identity per block. Without
  // blocks, or if the array cannot be mapped, there is no share (identities() stays empty and the
  // typed scan identifies every block itself).
  void ShareTyping(const types::ReaderSet& readers, const roots::ProcessMappings& mappings);
  // Marks from `roots` and the registers of `threads` with the helper, then propagates. Marks and
  // stats() are final on true; false if the helper died before its marks were final (blocks it
  // marked may not all have been scanned).
  bool Mark(const RootRanges& roots, std::span<const roots::ThreadInfo> threads);

  uint8_t* marks() const { return marks_; }
  const MarkStats& stats() const { return stats_; }

  // With a typing share: identifies this process's half, waits for the helper and identifies its
  // half too if it did not finish (a reader that crashed there crashes here as well, after the
  // leak result was written). Without one: waits for the helper.
  void FinishTyping();
  // Waits for the helper; true if it exited normally (its typing share is done).
  bool AwaitHelper();
  // Every block's own identity after FinishTyping; empty without a typing share.
  std::span<types::TypeIdentity> identities() const { return identities_; }

 private:
  struct Shared;  // the helper's statistics, followed by the marks, in one MAP_SHARED mapping

  void IdentifyRange(uint32_t begin, uint32_t end) const;
  // The helper, after the clone: marks its share, says so on `done_fd`, types its share, exits.
  [[noreturn]] void RunHelper(const RootRanges& roots, std::span<const roots::ThreadInfo> threads,
                              int done_fd);
  // Waits for the helper's word on `done_fd` (closed here) and adds its statistics; false if it
  // died first.
  bool JoinHelperMarks(int done_fd);

  const BlockIndex& index_;
  const bool interior_;
  PresentPages* const pages_;
  Shared* shared_ = nullptr;
  uint8_t* marks_ = nullptr;
  MarkStats stats_;
  pid_t helper_ = 0;  // 0: none (not cloned, or already waited for)
  bool alone_ = false;
  // The helper's typing share, set by ShareTyping.
  const types::ReaderSet* readers_ = nullptr;  // nullptr: no share
  const roots::ProcessMappings* mappings_ = nullptr;
  std::span<types::TypeIdentity> identities_;
  uint32_t half_ = 0;
};

}  // namespace heapgraph::scanner
