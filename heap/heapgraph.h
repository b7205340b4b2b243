/* heapgraph public C API of the recorder (libheapgraph.so). Link the library into a test build or
 * LD_PRELOAD it; these functions exist only in it. Configuration comes from HEAPGRAPH_OPTIONS
 * (docs/configuration.md) or heapgraph_set_options(). All functions are thread-safe. */
#ifndef HEAPGRAPH_HEAPGRAPH_H_
#define HEAPGRAPH_HEAPGRAPH_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Applies "key=value,key=value" at run time. Keys that can change after start: depth,
 * large_threshold, paused. Returns the number of rejected entries (each reported on stderr). */
int heapgraph_set_options(const char* options);

/* Stops / restarts recording new allocations. Frees are still applied while paused, so the tree
 * never holds blocks that were freed. */
void heapgraph_pause(void);
void heapgraph_resume(void);
/* 1 while allocations are being recorded, 0 otherwise (paused, disabled, or failed to start). */
int heapgraph_is_recording(void);

/* The per-process recording directory (ends without '/'), or NULL when not recording. */
const char* heapgraph_recording_dir(void);

/* Called for every allocation at or above large_threshold, after it was logged. Runs on the
 * allocating thread with recording suspended for that thread. */
typedef void (*heapgraph_large_alloc_callback)(void* address, size_t size, const uintptr_t* frames,
                                              size_t depth, void* user_data);
void heapgraph_set_large_alloc_callback(heapgraph_large_alloc_callback callback, void* user_data);

/* Never record allocations of the calling thread (tool threads). */
void heapgraph_ignore_current_thread(void);

/* Asks the kernel to write the recording to disk (it survives a kill without this). */
void heapgraph_sync(void);

#ifdef __cplusplus
}
#endif

#endif /* HEAPGRAPH_HEAPGRAPH_H_ */
