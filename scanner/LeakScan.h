// scanner/: one leak scan of the calling process. With every recorder lock held (no block can be
// added or removed), every other thread is stopped and the process is snapshotted with a raw
// fork-like clone by the ptrace helper itself, which then detaches every thread before the caller
// wakes (roots/ThreadCapture::CloneStoppedWorld; glibc's fork would run atfork handlers that take
// malloc locks a stopped thread may hold). The snapshot child (scanner/SnapshotProcess.h) copies
// the live blocks out of the recorder's tree, which lets the parent release the recorder
// (allocations resume), then finds the roots, marks conservatively, and writes the unreachable
// blocks and the references among them to a memfd the parent reads (scanner/ResultChannel.h).
// The world is stopped only for the capture and the clone. The child never calls malloc; the
// parent allocates only before and after. This side (LeakScan.cc): prepare, lock, stop and clone,
// wait for the copy, release, wait for the child, read its result and types.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "scanner/ExplainScanResult.h"
#include "scanner/ScanResult.h"

struct HeapgraphRecorderView;

namespace heapgraph::scanner {

namespace types {
class ReaderSet;
}

// The recorder's live blocks and bytes at a glance.
struct HeapTotals {
  uint64_t blocks = 0;
  uint64_t bytes = 0;
};

struct ScanOptions {
  bool interior_pointers = true;
  bool allow_signal_fallback = true;  // when ptrace is denied
  // When the check runs on a stack of its own (report/LeakCheck does): the calling thread's stack
  // pointer where the program called into heapgraph. That thread's program stack is scanned from
  // there up, and the stack the scan runs on is never scanned. 0: the scan runs on the program's
  // stack, which is scanned from the scan's entry up.
  uint64_t program_stack_pointer = 0;
  // Type the live blocks (scanner/types readers) and collect the typed references and retention
  // paths that graph/ needs for retain cycles (scanner/TypedScan).
  bool types = true;
  // When typing: called before the stop, after the built-in readers are registered, to add
  // readers of the program's own object models (scanner/types/ObjectModelReader.h), identified
  // after the built-in ones. A reader that crashes in the snapshot costs the types, not the check.
  std::function<void(types::ReaderSet&)> add_readers;
  // When typing: readers already prepared (Prepare) for the modules loaded now, e.g. by an earlier
  // check; null: the built-in readers (and add_readers) are registered and prepared for this scan.
  std::shared_ptr<types::ReaderSet> prepared_readers;
  // When typing: the typed pass runs only if the marking left a block unmarked (a leak); a clean
  // scan then has no typed result (ScanResult::typed.enabled false). It halves a clean scan's
  // snapshot time, and so the copy-on-write faults the program's threads take meanwhile.
  bool types_only_if_leaked = false;
  // The recorder stays locked (allocations and frees wait) until the snapshot has marked, not only
  // copied the blocks: the program's threads run, but while they wait they write none of the pages
  // the snapshot shares with them, and each write of such a page costs a copy-on-write fault and a
  // TLB shootdown (with ten threads allocating, most of a check's time). The allocation pause then
  // lasts as long as the marking (LeakSanitizer stops every thread for its whole check).
  bool hold_allocations_while_marking = false;
  // The whole scan in the program's own memory while every thread stays stopped, without a
  // snapshot process (SnapshotProcess::InPlace; LeakSanitizer's way). The world-stopped time
  // becomes the scan's, and the threads take no copy-on-write fault afterwards (each page a thread
  // writes after a snapshot process was made faults once, with a TLB shootdown). With ptrace only;
  // under signal suspension, or once a page faulted during an in-place scan of this process, the
  // scan makes a snapshot process as without it.
  bool in_stopped_world = false;
  // The process ends after this scan (the at-exit check): its preparation (the stop's helper
  // stack and arenas, the mappings' buffers: tens of MiB mapped) is not unmapped. An munmap while
  // another core has run the process flushes that core's TLB by IPI (such IPIs were 2.8 % of a
  // small checked process's samples); the exit's teardown unmaps everything at once, without.
  bool process_exits = false;
  // Scanned as in_stopped_world when the recorder holds at most in_place_max_live_blocks blocks
  // of at most in_place_max_live_bytes bytes in all (0: never). A small heap is marked in the
  // stopped world in about the time a snapshot process takes to be made (the program's page
  // tables cloned), so the world stops hardly longer, the check ends sooner and the threads take
  // no copy-on-write fault afterwards. A scan in place that meets a faulting page falls back to a
  // snapshot process as with in_stopped_world, without a notice (nobody asked for it in place).
  uint64_t in_place_max_live_blocks = 0;
  uint64_t in_place_max_live_bytes = 0;
  // The recorder's live blocks and bytes as the caller read them a moment before (the check's
  // count, scanner::LiveBlocksInWindow): the scan sizes its choice and its copy from them instead
  // of glancing at the recorder again. Without them it glances itself.
  std::optional<HeapTotals> heap_totals;
  // Blocks to explain (scanner/ExplainScan): their chains from the roots go to
  // ScanResult::explained. Empty: nothing of it runs.
  ExplainRequest explain;
  // Called on the calling thread while the snapshot process marks: after the threads were
  // released and the recorder unlocked, before the scan waits for the snapshot's result; not
  // called when the snapshot could not be created, nor after a scan in place (its marking is over
  // when this thread runs again: a symbol warm-up would only delay the result; in
  // bench/repeated_checks.cc its first step alone wrote 512 KiB of fresh pages a check).
  // `marking_done` polls (without blocking) whether the snapshot process has finished, so the
  // callback can stop early. The callback's allocations are made after the snapshot, so they are
  // never roots or blocks of this scan. `so_far` is the scan's result before the marking's: its
  // recording_dir and the recorder's report options (suppressions, symbol_cache...) are set.
  // Exceptions it throws are swallowed: the scan's result never depends on it.
  std::function<void(const ScanResult& so_far, const std::function<bool()>& marking_done)>
      while_marking;
  // while_marking runs only when the recorder held at least this many live bytes at the snapshot:
  // a smaller heap is marked in about a millisecond, before the callback could overlap anything,
  // so the callback would only add its own time (a symbol warm-up's first libdw load: tens of ms).
  uint64_t while_marking_min_live_bytes = 0;
};

// Requires libheapgraph.so recording this process (preloaded or linked).
ScanResult RunLeakScan(const ScanOptions& options);

// The recorder's options that shape a check's report, as a locked recorder's `view` gives them:
// recording_dir, suppressions, symbol_cache, max_leaks, categories, preview_bytes. The one place
// a ScanResult takes them (a scan, or a count that skips the scan: LiveBlocksInWindow).
void TakeReportOptions(const HeapgraphRecorderView& view, ScanResult* result);

}  // namespace heapgraph::scanner
