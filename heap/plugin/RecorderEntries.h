// heap/plugin/: the recorder's entry points (heap/plugin/ScanInterface.h) as the scanner side sees
// them: libheapgraph.so's exports, found once per process with dlsym(RTLD_DEFAULT), so the leak
// scan and check (scanner/, check/) can run in any process and tell when heapgraph is not loaded
// there. The only place that looks them up: callers use the typed pointers, never a symbol name
// or a cast. Not for libheapgraph.so itself, which calls its own entries directly. Thread-safe;
// the pointers never change once found (libheapgraph.so is never unloaded: -z nodelete).
#pragma once

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

struct RecorderEntries {
  HeapgraphBeginSnapshotFn begin_snapshot = nullptr;
  HeapgraphEndSnapshotFn end_snapshot = nullptr;
  HeapgraphIgnoreThreadFn ignore_thread = nullptr;
  HeapgraphBeginCheckFn begin_check = nullptr;
  HeapgraphEndCheckFn end_check = nullptr;
  HeapgraphSequenceFn sequence = nullptr;  // checkpoints and the current sequence

  // This process's entries; every pointer null when libheapgraph.so is not loaded (resolved on the
  // first call, with dlsym: may allocate then, like any first dlsym).
  static const RecorderEntries& Get();

  // The snapshot pair is there (libheapgraph.so is loaded).
  bool loaded() const { return begin_snapshot != nullptr && end_snapshot != nullptr; }
};

}  // namespace heapgraph
