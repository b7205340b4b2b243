/* adapters/glib: the lag monitor's GLib main-loop adapter (libheapgraph_glib.so, docs/lag.md
 * "Adapters"). heapgraph_glib_monitor_attach() attaches a source of the highest priority
 * (G_MININT) to a main context: its prepare(), called first in every iteration just before the
 * context polls, ends the thread's unit of work (heapgraph_work_end); its check(), called first
 * right after the poll, begins the next one (heapgraph_work_begin). It is never ready and never
 * dispatched. So a unit is everything the context dispatches between two polls, and a callback
 * that blocks the loop longer than lag_threshold_ms is a lag whose stack names it. A source was
 * chosen over g_main_context_set_poll_func: it replaces nothing of the program's (a context has
 * one poll function), composes with other sources, and is removed like any source. Attaching
 * begins a unit (the code until the first poll); heapgraph_glib_monitor_detach() ends it and
 * destroys the source: call it when the loop returns. */
#ifndef HEAPGRAPH_ADAPTERS_GLIB_HEAPGRAPH_GLIB_H_
#define HEAPGRAPH_ADAPTERS_GLIB_HEAPGRAPH_GLIB_H_

#include <glib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `context`: NULL for the default context. Returns the source (owned by the context). */
__attribute__((visibility("default"))) GSource* heapgraph_glib_monitor_attach(
    GMainContext* context);
/* Ends the current unit and destroys `source`. */
__attribute__((visibility("default"))) void heapgraph_glib_monitor_detach(GSource* source);

#ifdef __cplusplus
}
#endif

#endif /* HEAPGRAPH_ADAPTERS_GLIB_HEAPGRAPH_GLIB_H_ */
