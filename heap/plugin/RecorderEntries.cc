#include "heap/plugin/RecorderEntries.h"

#include <dlfcn.h>

namespace heapgraph {
namespace {

template <typename Fn>
Fn Lookup(const char* symbol) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, symbol));
}

RecorderEntries Resolve() {
  RecorderEntries entries;
  entries.begin_snapshot = Lookup<HeapgraphBeginSnapshotFn>(HEAPGRAPH_BEGIN_SNAPSHOT_SYMBOL);
  entries.end_snapshot = Lookup<HeapgraphEndSnapshotFn>(HEAPGRAPH_END_SNAPSHOT_SYMBOL);
  entries.ignore_thread = Lookup<HeapgraphIgnoreThreadFn>(HEAPGRAPH_IGNORE_THREAD_SYMBOL);
  entries.begin_check = Lookup<HeapgraphBeginCheckFn>(HEAPGRAPH_BEGIN_CHECK_SYMBOL);
  entries.end_check = Lookup<HeapgraphEndCheckFn>(HEAPGRAPH_END_CHECK_SYMBOL);
  entries.sequence = Lookup<HeapgraphSequenceFn>(HEAPGRAPH_SEQUENCE_SYMBOL);
  return entries;
}

}  // namespace

const RecorderEntries& RecorderEntries::Get() {
  static const RecorderEntries entries = Resolve();
  return entries;
}

}  // namespace heapgraph
