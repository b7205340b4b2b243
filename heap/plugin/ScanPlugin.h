// heap/plugin/: libheapgraph_scan.so, the part of heapgraph above heap/ that tool threads inside
// the recorded process call (leak checks, the watcher's type refresh). It sits next to
// libheapgraph.so and is loaded with dlopen on first use, so the recorder keeps its dependencies
// minimal and heap/ includes nothing of the layers above it (it knows only the C entry points of
// heap/plugin/ScanInterface.h). The only place libheapgraph.so looks the plugin's entries up:
// callers get typed pointers, never spell a symbol name or cast.
// The first lookup loads the plugin (dlopen; it is never unloaded), so it allocates: call these
// from a tool thread, the at-exit check or a public check function with the thread's recording
// ignored, never from a hook or a signal handler. Later lookups return the cached entry without
// entering the loader.
#pragma once

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace ScanPlugin {

// heapgraph_internal_check_leaks, loading the plugin if needed; null after one line on stderr
// ("heapgraph: cannot load the leak checker: <why>").
HeapgraphCheckLeaksFn CheckLeaks();
// heapgraph_internal_refresh_types, the same way ("... cannot load the type reader: <why>").
HeapgraphRefreshTypesFn RefreshTypes();

// The recorder's fork handlers: a fork waits for a lookup that is loading the plugin, so that no
// child inherits the loader in the middle of dlopen (LeakCheckOverlapTest, forks during the first
// check). AfterFork in both the parent and the child.
void BeforeFork();
void AfterFork();

}  // namespace ScanPlugin

}  // namespace heapgraph
