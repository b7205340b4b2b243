/* heapgraph public C API of the recorder (libheapgraph.so). Link the library into a test build or
 * LD_PRELOAD it; these functions exist only in it. Configuration comes from HEAPGRAPH_OPTIONS
 * (docs/configuration.md) or heapgraph_set_options(). All functions are thread-safe. */
#ifndef HEAPGRAPH_HEAPGRAPH_H_
#define HEAPGRAPH_HEAPGRAPH_H_

#include <stddef.h>
#include <stdint.h>

/* The one export marker: every function libheapgraph.so and libheapgraph_scan.so export carries
 * it, on its declaration here and on its definition (everything else in them is hidden). */
#if defined(__GNUC__)
#define HEAPGRAPH_API __attribute__((visibility("default")))
#else
#define HEAPGRAPH_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Applies "key=value,key=value" at run time. Keys that can change after start: depth,
 * large_threshold, paused. Returns the number of rejected entries (each reported on stderr). */
HEAPGRAPH_API int heapgraph_set_options(const char* options);

/* Stops / restarts recording new allocations. Frees are still applied while paused, so the tree
 * never holds blocks that were freed. */
HEAPGRAPH_API void heapgraph_pause(void);
HEAPGRAPH_API void heapgraph_resume(void);
/* 1 while allocations are being recorded, 0 otherwise (paused, disabled, or failed to start). */
HEAPGRAPH_API int heapgraph_is_recording(void);

/* The per-process recording directory (ends without '/'), or NULL when not recording. */
HEAPGRAPH_API const char* heapgraph_recording_dir(void);

/* Called for every allocation at or above large_threshold, after it was logged. Runs on the
 * allocating thread with recording suspended for that thread. */
typedef void (*heapgraph_large_alloc_callback)(void* address, size_t size, const uintptr_t* frames,
                                               size_t depth, void* user_data);
HEAPGRAPH_API void heapgraph_set_large_alloc_callback(heapgraph_large_alloc_callback callback,
                                                      void* user_data);

/* Never record allocations of the calling thread (tool threads); its frees are still applied. */
HEAPGRAPH_API void heapgraph_ignore_current_thread(void);

/* FOOM dumps (docs/foom-report.md). Whether the app is in the foreground (1) or background (0):
 * a run killed without a trace in the background is not counted as a likely OOM kill. Programs
 * that never call it count as foreground. */
HEAPGRAPH_API void heapgraph_set_app_state(int foreground);
/* Marks progress of the program's main loop. Once called, the session heartbeat measures
 * progress by these calls instead of by allocations: no call for hang_ms before the process was
 * killed classifies the run as a hang. */
HEAPGRAPH_API void heapgraph_heartbeat(void);

/* Lag monitor (docs/configuration.md, "Lag monitor"): one unit of work of the calling thread's
 * event loop starts / ends (call them around each handler, or from a loop's prepare/check hooks).
 * The first call makes the calling thread a monitored one (at most 16 threads; more are ignored)
 * and starts the watchdog thread, which records a lag when a unit runs longer than
 * lag_threshold_ms, with the unit's most time-consuming stack sampled every lag_sample_ms. No
 * allocation, no lock: callable from any thread, any number of times; an unmatched end is ignored.
 */
HEAPGRAPH_API void heapgraph_work_begin(void);
HEAPGRAPH_API void heapgraph_work_end(void);

/* Asks the kernel to write the recording to disk (it survives a kill without this). */
HEAPGRAPH_API void heapgraph_sync(void);

/* ---- Leak checks: defined in libheapgraph.so (linked, or preloaded and found with dlsym), which
 * loads the checker, libheapgraph_scan.so, from beside itself on the first check. The process must
 * be recording. */

typedef struct heapgraph_leak_summary {
  int ok; /* 0: the check failed, `error` says why */
  unsigned long long direct_blocks;
  unsigned long long indirect_blocks;
  unsigned long long leaked_bytes;
  unsigned long long cycles;
  unsigned long long live_blocks;
  double world_stopped_ms;
  double total_ms;
  char error[256];
  /* The longest time a thread of the program waited for a recorder lock during the check (the
   * JSON report's scan.longest_allocation_wait_ms; a lower bound for a check scanned in place:
   * a repeated one, or one of at most 4,096 blocks and 4 MiB). Added after `error`: a binary built
   * against a header without it must be rebuilt. */
  double longest_allocation_wait_ms;
} heapgraph_leak_summary;

/* Scans now: stops the world briefly, finds unreachable blocks, writes the JSON report to
 * `json_path` and the text report to `text_path` when non-null ("-" = stderr). Returns the number
 * of leaked blocks (direct + indirect), or -1 if the check could not run. `summary` may be null.
 * Repeatable, from any thread. */
HEAPGRAPH_API int heapgraph_check_leaks(const char* json_path, const char* text_path,
                                        heapgraph_leak_summary* summary);

/* heapgraph_check_leaks, and the reports also say why each block of `explain` is reachable: one
 * shortest chain from a root (a thread's stack or registers, a global, TLS, an anonymous mapping)
 * through the heap to it, or that it was reported as a leak. `explain`: '/'-separated targets,
 * each an address (0x..., the live block containing it) or a function name (at most 10 live blocks
 * whose allocation stack contains that function; a C++ name without parameters, qualified or not:
 * `ns::Cls::Run` or `Run`). Null or "" explains nothing. See docs/leak-scan.md, "Why is this block
 * reachable".
 */
HEAPGRAPH_API int heapgraph_check_leaks_explain(const char* json_path, const char* text_path,
                                                const char* explain,
                                                heapgraph_leak_summary* summary);

/* ---- Checkpoints and delta checks (docs/leak-scan.md, "Checkpoints"). */

/* Marks a point of the program by allocation sequence under `name` (libheapgraph.so). Setting a
 * name again moves it; 64 names are kept (the least recently set goes first). Returns 0, or -1
 * when the process is not recording. Blocks the calling thread allocates afterwards are after
 * the checkpoint; another thread may still use up to 1,023 sequence numbers it reserved before. */
HEAPGRAPH_API int heapgraph_checkpoint(const char* name);

/* heapgraph_check_leaks, but only blocks allocated after checkpoint `checkpoint` (and before the
 * check) are candidates: marking still starts from every root (Valgrind's "added" check). A name
 * never set gives one line on stderr and the check covers every block. The reports carry
 * "window": {"checkpoint", "from_seq", "to_seq"}, and are written only when something in the
 * window leaked (no file, no symbolization otherwise). Returns the leaked blocks in the window. */
HEAPGRAPH_API int heapgraph_check_leaks_since(const char* checkpoint, const char* json_path,
                                              const char* text_path,
                                              heapgraph_leak_summary* summary);

/* The "changed" check: only blocks of allocation stacks whose leaked block count or bytes grew
 * since the previous changed check of this process (the first one compares with nothing). Reports
 * as heapgraph_check_leaks_since, with "checkpoint": "(changed)". */
HEAPGRAPH_API int heapgraph_check_leaks_changed(const char* json_path, const char* text_path,
                                                heapgraph_leak_summary* summary);

#ifdef __cplusplus
}
#endif

#endif /* HEAPGRAPH_HEAPGRAPH_H_ */
