// heap/plugin/: the internal C ABI that libheapgraph.so exports for heapgraph's own scanner (not a
// user API). The scanner finds these with dlsym(RTLD_DEFAULT, ...), so it can run in any process
// and say clearly when heapgraph is not recording there.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
namespace heapgraph {
class LiveAllocationTree;
class VmRegionTree;
class UnwinderMappings;
}  // namespace heapgraph
extern "C" {
#endif

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
  // The memory heapgraph's unwinder (libunwind) mapped for itself: never a root.
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
};

// Holds every recorder lock and stops recording on the calling thread until EndSnapshot: no
// block can be added or removed. Fills `view`. Returns 0, or -1 if the recorder is not running.
typedef int (*HeapgraphBeginSnapshotFn)(struct HeapgraphRecorderView* view);
typedef void (*HeapgraphEndSnapshotFn)(void);

// Sets whether the calling thread's allocations are recorded (1: ignored); returns the previous.
typedef int (*HeapgraphIgnoreThreadFn)(int ignore);

// Why a leak check refuses a sampled recording (printf format; %s = the sample mean as configured).
#define HEAPGRAPH_SAMPLED_REFUSAL \
  "leak check needs full recording; this process records a sample (sample=%s)"

// The watcher's type refresh (libheapgraph_scan.so): reads the type of every live heap block of
// `heap` now (the typed-graph readers of scanner/types through process_vm_readv; best effort,
// racing the program) and rewrites the recording's `types` file (PersistedFormat.h) in `dir_fd`.
// Returns the records written or -1.
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
typedef int (*HeapgraphRefreshTypesFn)(const struct HeapgraphTypeRefresh* request);
#define HEAPGRAPH_REFRESH_TYPES_SYMBOL "heapgraph_internal_refresh_types"

#define HEAPGRAPH_IGNORE_THREAD_SYMBOL "heapgraph_internal_ignore_thread"
#define HEAPGRAPH_BEGIN_SNAPSHOT_SYMBOL "heapgraph_internal_begin_snapshot"
#define HEAPGRAPH_END_SNAPSHOT_SYMBOL "heapgraph_internal_end_snapshot"

#ifdef __cplusplus
}
#endif
