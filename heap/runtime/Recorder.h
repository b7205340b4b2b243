// heap/runtime/: the recorder inside libheapgraph.so: one process-wide instance of the tree, stack
// store, module map and large-allocation monitor, started lazily by the first hook, moved to
// memory copies in a forked child and to the child's own directory once it lives (ForkSnapshot),
// and reached by the interposed functions through these entry
// points. Invariant: no entry point calls the host's malloc, and every entry point returns at
// once when re-entered on the same thread (thread-local guard, initial-exec TLS).
#pragma once

#include <cstddef>
#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph::recorder {

// The bytes an allocation hook asks glibc for when the program asks for `size`: room for the
// block's tag behind the program's bytes (heap/runtime/BlockTag.h) whenever the block may be
// recorded; `aligned` for the memalign family, whose chunks the padding rule does not predict.
size_t RequestSize(size_t size, bool aligned);
// malloc_usable_size: glibc's, less a recorded block's tag.
size_t UsableSize(void* address);
void RecordAlloc(void* address, size_t size, format::AllocFunction function);
void RecordFree(void* address);
// free, first: true when the recorder took the free over (queued, and applied with its batch:
// heap/runtime/DeferredFrees.h); false when the caller records and frees the block itself.
bool QueueFree(void* address);
// realloc of a non-null block: BeginRealloc takes the old block out of the tree before the
// allocator may hand its address to another thread; EndRealloc records the result, or puts the
// old block back if the allocator failed and the old block is still valid.
struct ReallocTicket {
  BlockRecord old;
  bool recorded = false;
};
ReallocTicket BeginRealloc(void* old_address);
void EndRealloc(const ReallocTicket& ticket, void* result, size_t size,
                format::AllocFunction function);

// Anonymous mappings. RecordMap replaces whatever was recorded in the range (MAP_FIXED).
void RecordMap(void* address, size_t length, format::AllocFunction function);
void RecordUnmap(void* address, size_t length);
// mremap: moves a recorded region; a region that was never recorded (file mapping) stays unknown.
void RecordRemap(void* old_address, size_t old_length, void* address, size_t length);

// The unwinder's own mappings (UnwinderMappings.h: the rule walk's table): every hook that unmaps
// or replaces memory forgets the ranges it touches, before its syscall. Neither allocates nor
// locks; works in any recorder mode and inside hooks.
void ForgetUnwinderMaps(void* address, size_t length);

// dlclose (after glibc's): marks the module records of objects no longer loaded.
void NoteDlclose();

// True while the calling thread is inside a hook (or is a tool thread).
bool InHook();

// LeakSanitizer's interface (heap/runtime/LsanInterface.cc). IgnoreBlock sets the ignored flag of
// the recorded heap block starting at `address` (BlockRecord::ignored); false if none starts
// there. ChangeDisabledDepth adds `delta` (+1 or -1) to the calling thread's disable depth, under
// which every heap block it allocates is recorded ignored; false (depth unchanged) when -1 would
// go below 0. Neither allocates.
bool IgnoreBlock(const void* address);
bool ChangeDisabledDepth(int delta);

// exit/_exit (SessionInterposer.cc): records how the process is leaving in its session.
void RecordExit(format::ExitKind kind, int status);

// pthread_create (ThreadInterposer.cc), before the new thread exists: a forked child still
// recording into memory copies writes its directory while it is single-threaded.
void BeforeThreadCreate();

}  // namespace heapgraph::recorder
