/* adapters/uv: the lag monitor's libuv adapter (libheapgraph_uv.so, docs/lag.md "Adapters").
 * heapgraph_uv_monitor_start() adds two handles to a loop, both unreferenced (they never keep the
 * loop alive): a prepare handle, run just before the loop waits for I/O, ends the thread's unit
 * of work (heapgraph_work_end); a check handle, run just after, begins the next one
 * (heapgraph_work_begin). So a unit is everything the loop runs between two waits (timers,
 * I/O callbacks, idle, pending), and a callback that blocks the loop for longer than
 * lag_threshold_ms is a lag whose stack names it. The start also begins a unit (the code until
 * the first wait). Call heapgraph_uv_monitor_stop() when uv_run returns (else the code after it
 * counts as one endless unit); the struct must live until the loop has run the handles' close
 * callbacks (uv_run or uv_loop_close). One monitor per loop, on the loop's thread. */
#ifndef HEAPGRAPH_ADAPTERS_UV_HEAPGRAPH_UV_H_
#define HEAPGRAPH_ADAPTERS_UV_HEAPGRAPH_UV_H_

#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct heapgraph_uv_monitor {
  uv_prepare_t prepare;
  uv_check_t check;
} heapgraph_uv_monitor;

/* 0, or libuv's error code (nothing is left started). */
__attribute__((visibility("default"))) int heapgraph_uv_monitor_start(heapgraph_uv_monitor* monitor,
                                                                      uv_loop_t* loop);
/* Ends the current unit and closes both handles. */
__attribute__((visibility("default"))) void heapgraph_uv_monitor_stop(
    heapgraph_uv_monitor* monitor);

#ifdef __cplusplus
}
#endif

#endif /* HEAPGRAPH_ADAPTERS_UV_HEAPGRAPH_UV_H_ */
