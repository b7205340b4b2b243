// heap/plugin/: the internal C ABI between heapgraph's two libraries (not a user API), in both
// directions, with each entry point's C type and symbol name:
//   - the recorder's entries (libheapgraph.so exports them): the scanner side (scanner/, check/,
//     in libheapgraph_scan.so or linked into a program) finds them with dlsym(RTLD_DEFAULT)
//     through RecorderEntries (heap/plugin/RecorderEntries.h), so a scan can run in any process
//     and say clearly when heapgraph is not recording there;
//   - the plugin's entries (libheapgraph_scan.so exports them, check/heapgraph_scan.map): the
//     recorder's tool threads and at-exit check find them through ScanPlugin
//     (heap/plugin/ScanPlugin.h), which loads the plugin on first use.
// Nobody else spells a symbol name or casts a looked-up address. The definitions (heap/runtime/
// Recorder.cc, check/LeakCheck.cc, check/TypeRefresh.cc) include this header, so the compiler
// checks them against these declarations. Inside libheapgraph.so, the recorder's entries are
// called directly; a plugin entry is never called directly outside libheapgraph_scan.so.
#pragma once

#include <stdint.h>

#include "heapgraph/heapgraph.h"

#ifdef __cplusplus
namespace heapgraph {
class LiveAllocationTree;
class VmRegionTree;
class UnwinderMappings;
class StackStore;
struct LockWaitWindow;
}  // namespace heapgraph
extern "C" {
#endif

#define HEAPGRAPH_INTERNAL_ENTRY __attribute__((visibility("default")))

// ---- The recorder's entries (libheapgraph.so) --------------------------------------------------

struct HeapgraphCheckEntrant {
  int64_t tid;             // kernel thread id; 0: a free slot, negative: being filled
  uint64_t stack_pointer;  // the program's frame that called the check: scanned from here up
};

// A memory range the program registered as a root (LeakSanitizer's __lsan_register_root_region):
// a check scans whatever of it is mapped and readable. begin 0: a free slot. The writer stores
// size before begin and clears begin first, so a slot read while its thread is stopped is either
// free or whole.
struct HeapgraphRootRegion {
  uint64_t begin;
  uint64_t size;
};

// A thread's frees that the recorder has not applied yet (heap/runtime/DeferredFrees.h): the
// blocks address[0..count) were freed by the program and are still in the live-allocation tree
// and in glibc's heap; a check drops them from its blocks. The recorder raises count after writing
// an entry and lowers it after taking that entry's block out of the tree, so a queue read while its
// thread is stopped names only freed blocks, and every freed block still in the tree.
#define HEAPGRAPH_DEFERRED_FREES 16
struct HeapgraphDeferredFrees {
  uint32_t count;  // <= HEAPGRAPH_DEFERRED_FREES
  uint32_t reserved;
  uint64_t address[HEAPGRAPH_DEFERRED_FREES];
};

// An address range [begin, end).
struct HeapgraphMemoryRange {
  uint64_t begin;
  uint64_t end;
};

struct HeapgraphRecorderView {
#ifdef __cplusplus
  heapgraph::LiveAllocationTree* heap;
  heapgraph::VmRegionTree* vm;
#else
  void* heap;
  void* vm;
#endif
  const char* recording_dir;
  int recording;         // 1 while allocations are being recorded (not paused, disabled or sampled)
  uint64_t sample_mean;  // != 0: heap.tree holds only a sample of the blocks (leak scans refuse)
  // The memory heapgraph's stack capture mapped for itself (the rule walk's table, the threads'
  // stack caches): never a root.
#ifdef __cplusplus
  const heapgraph::UnwinderMappings* unwinder;
#else
  const void* unwinder;
#endif
  // The recorder's per-thread state (stack-id cache, guards, sampler): in every thread, the
  // thread_state_size bytes at thread pointer + thread_state_offset (static TLS; x86-64: %fs:0,
  // aarch64: TPIDR_EL0). Heapgraph's own: never a root. Size 0: unknown.
  int64_t thread_state_offset;
  uint64_t thread_state_size;
  // The recording's files as the recorder holds them open (-1: closed or reused by the host),
  // borrowed: the check reads the stacks and modules through duplicates, never by path, so it
  // works after the program dropped privileges (the 0700 directory is the starting user's).
  int heap_tree_fd;
  int stacks_fd;
  int modules_fd;
  int session_fd;
  // The threads inside a check's entry (waiting for the check lock, or holding it): slot i is
  // free when tid is 0. A listed thread's frames below stack_pointer (its program caller's
  // frame) are the check's entry's (heap/runtime/CheckEntrants), never a root: stale words there
  // would keep leaks alive.
  const struct HeapgraphCheckEntrant* check_entrants;
  int check_entrant_slots;
  // The stack table (read-only: a snapshot reads the frames of a block's stack from it when a
  // check explains the blocks allocated under a function).
#ifdef __cplusplus
  const heapgraph::StackStore* stacks;
#else
  const void* stacks;
#endif
  // The program's registered root regions (heap/runtime/RootRegions.h): root_region_slots slots.
  const struct HeapgraphRootRegion* root_regions;
  int root_region_slots;
  // The recorder's options that shape every check's report (heap/config/Options.inc):
  // suppression files (';'-separated, "" none), the directory of symbolized addresses shared with
  // other processes ("" none), leak records the text prints (0 = all), and whether the text ends
  // with the categories table (1) or not (0).
  const char* suppressions;
  const char* symbol_cache;
  uint32_t max_leaks;
  int categories;
  uint32_t preview_bytes;  // leak_preview: bytes of each direct leak shown as hex (0: none)
  // The recorder's lock-wait window (heap/store/LockWait.h), opened by begin_snapshot: the longest
  // time a program thread waited for a recorder lock since then, timed by that thread.
#ifdef __cplusplus
  heapgraph::LockWaitWindow* lock_waits;
#else
  void* lock_waits;
#endif
  // The writable segments (.data, .bss) of libheapgraph.so: the recorder's state, never a
  // pointer to a block of the program's, so never a root (heap/plugin/OwnLibraryData.h).
  // own_data_ranges ranges.
  const struct HeapgraphMemoryRange* own_data;
  int own_data_ranges;
  // The queues of frees not applied yet (HeapgraphDeferredFrees), one per thread that has one:
  // deferred_queue_slots slots, a null slot is free. Each queue lies in its thread's static TLS;
  // a thread applies its queue and frees its slot before it exits.
  struct HeapgraphDeferredFrees* const* deferred_queues;
  int deferred_queue_slots;
};

// Holds every recorder lock and stops recording on the calling thread until EndSnapshot: no
// block can be added or removed. Fills `view`. Returns 0, or -1 if the recorder is not running.
HEAPGRAPH_INTERNAL_ENTRY int heapgraph_internal_begin_snapshot(struct HeapgraphRecorderView* view);
HEAPGRAPH_INTERNAL_ENTRY void heapgraph_internal_end_snapshot(void);
// Sets whether the calling thread's allocations are recorded (1: ignored); returns the previous.
// Async-signal-safe (a thread-local flag).
HEAPGRAPH_INTERNAL_ENTRY int heapgraph_internal_ignore_thread(int ignore);

// One leak check at a time in the process (heap/runtime/CheckLock.h): begin waits until no other
// thread is inside a check (and keeps fork() waiting until end); returns 0, or -1 at once when
// the calling thread is already inside one. `program_stack_pointer` is the frame of the program
// that asked for the check: while this thread waits, other checks scan its stack from there.
HEAPGRAPH_INTERNAL_ENTRY int heapgraph_internal_begin_check(uint64_t program_stack_pointer);
HEAPGRAPH_INTERNAL_ENTRY void heapgraph_internal_end_check(void);

// The allocation sequence where checkpoint `checkpoint` was set (heapgraph_checkpoint), or with a
// null name the next sequence number to be handed out. Returns 0, 1 when that checkpoint was never
// set, -1 when the process is not recording.
HEAPGRAPH_INTERNAL_ENTRY int heapgraph_internal_sequence(const char* checkpoint,
                                                         uint64_t* sequence);

typedef __typeof__(&heapgraph_internal_begin_snapshot) HeapgraphBeginSnapshotFn;
typedef __typeof__(&heapgraph_internal_end_snapshot) HeapgraphEndSnapshotFn;
typedef __typeof__(&heapgraph_internal_ignore_thread) HeapgraphIgnoreThreadFn;
typedef __typeof__(&heapgraph_internal_begin_check) HeapgraphBeginCheckFn;
typedef __typeof__(&heapgraph_internal_end_check) HeapgraphEndCheckFn;

typedef __typeof__(&heapgraph_internal_sequence) HeapgraphSequenceFn;
#define HEAPGRAPH_SEQUENCE_SYMBOL "heapgraph_internal_sequence"
#define HEAPGRAPH_BEGIN_SNAPSHOT_SYMBOL "heapgraph_internal_begin_snapshot"
#define HEAPGRAPH_END_SNAPSHOT_SYMBOL "heapgraph_internal_end_snapshot"
#define HEAPGRAPH_IGNORE_THREAD_SYMBOL "heapgraph_internal_ignore_thread"
#define HEAPGRAPH_BEGIN_CHECK_SYMBOL "heapgraph_internal_begin_check"
#define HEAPGRAPH_END_CHECK_SYMBOL "heapgraph_internal_end_check"

// Why a leak check refuses a sampled recording (printf format; %s = the sample mean as configured).
#define HEAPGRAPH_SAMPLED_REFUSAL \
  "leak check needs full recording; this process records a sample (sample=%s)"

// ---- The plugin's entries (libheapgraph_scan.so) -----------------------------------------------

// One leak check, as libheapgraph.so asks for it: its triggers (at exit, the scan signal,
// LeakSanitizer's __lsan_do_*leak_check) and the public check functions of
// include/heapgraph/heapgraph.h, which libheapgraph.so defines and forwards here.
enum HeapgraphCheckWindow {
  HEAPGRAPH_WINDOW_ALL = 0,      // every leaked block (heapgraph_check_leaks)
  HEAPGRAPH_WINDOW_SINCE = 1,    // allocated after `checkpoint` (heapgraph_check_leaks_since)
  HEAPGRAPH_WINDOW_CHANGED = 2,  // of stacks whose leaks grew (heapgraph_check_leaks_changed)
};
struct HeapgraphCheckRequest {
  const char* json_path;  // null: not written; "-": stdout / stderr as the public API says
  const char* text_path;
  heapgraph_leak_summary* summary;  // may be null
  // The program's stack is scanned from here up (the caller's own frames below are not the
  // program's).
  uint64_t program_stack_pointer;
  int interior_pointers;
  const char* explain;     // heapgraph_check_leaks_explain's targets; null or "" for none
  int window;              // enum HeapgraphCheckWindow
  const char* checkpoint;  // HEAPGRAPH_WINDOW_SINCE: the checkpoint's name (never null then)
  const char* html_path;   // null: no page; else the report as an HTML page (option leak_html)
  // 1: a check the program makes again and again (__lsan_do_recoverable_leak_check), made cheap
  // as LeakCheckOptions::repeated says.
  int repeated;
  // 1: a text report to stderr is left out when nothing leaked (LeakCheckOptions::
  // quiet_when_clean): the checks the recorder starts itself, as LeakSanitizer's are silent then.
  int quiet_when_clean;
  // 1: the process ends after this check (the at-exit check): what the check mapped is left to
  // the exit (LeakCheckOptions::process_exits).
  int process_exits;
};
// Returns the leaked blocks (of the window), or -1 when the check could not run.
HEAPGRAPH_INTERNAL_ENTRY int heapgraph_internal_check_leaks(
    const struct HeapgraphCheckRequest* request);

// The watcher's type refresh: reads the type of every live heap block of `heap` now (the
// typed-graph readers of scanner/types through process_vm_readv; best effort, racing the program)
// and rewrites the recording's `types` file (PersistedFormat.h) in `dir_fd`. Returns the records
// written or -1.
struct HeapgraphTypeRefresh {
#ifdef __cplusplus
  heapgraph::LiveAllocationTree* heap;
#else
  void* heap;
#endif
  int dir_fd;
  uint64_t sequence;     // SessionHeader.sequence now
  uint64_t sample_mean;  // 0: full recording
};
HEAPGRAPH_INTERNAL_ENTRY int heapgraph_internal_refresh_types(
    const struct HeapgraphTypeRefresh* request);

typedef __typeof__(&heapgraph_internal_check_leaks) HeapgraphCheckLeaksFn;
typedef __typeof__(&heapgraph_internal_refresh_types) HeapgraphRefreshTypesFn;

#define HEAPGRAPH_CHECK_LEAKS_SYMBOL "heapgraph_internal_check_leaks"
#define HEAPGRAPH_REFRESH_TYPES_SYMBOL "heapgraph_internal_refresh_types"

#ifdef __cplusplus
}
#endif
