// heap/runtime/: starts leak checks from inside the recorded process: at exit (after static
// destructors) and on a signal. The check itself lives in libheapgraph_scan.so next to
// libheapgraph.so; it is loaded with dlopen only when a check runs, so the recorder keeps its
// dependencies minimal and heap/ includes nothing of the layers above it (it knows only the C entry
// point's name).
#pragma once

#include "heap/config/Config.h"

namespace heapgraph {

namespace LeakCheckTrigger {

// From the library constructor: registers the at-exit check (first, so it runs last) and the
// signal watcher as configured. One line on stderr for anything that cannot be set up. The at-exit
// check ends the process with `exitcode` when it finds leaks, and with `error_exitcode` (one line
// on stderr says why) when it could not run: sampled recording, plugin not loadable, scan failed.
void Install(const Config& config, const char* recording_dir);

}  // namespace LeakCheckTrigger

}  // namespace heapgraph
