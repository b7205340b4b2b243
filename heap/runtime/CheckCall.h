// heap/runtime/: one leak check asked for by the program, from libheapgraph.so's entries (the
// public check functions, the at-exit, signal and LeakSanitizer triggers). From before the plugin
// is looked up until the report is freed, the calling thread is listed with the program's frame
// (heap/runtime/CheckEntrants), so a check running on another thread meanwhile never scans the
// frames below it. Before the thread is unlisted and returns to the program, the stack below this
// call is zeroed: the frames of the check's entry lie there with slots they never wrote (stale
// block addresses), and the program's next calls (or a later check's entry, laid over them while
// unlisted) would keep them. Needs 64 KiB of stack below the caller.
#pragma once

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace CheckCall {

// Runs the checker (loaded on first use) on `request`; false, nothing run, when it cannot be
// loaded (ScanPlugin printed why). `*result`: the checker's return value.
bool Run(HeapgraphCheckRequest& request, int* result);

}  // namespace CheckCall

}  // namespace heapgraph
