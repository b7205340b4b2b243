// heap/plugin/: while one lives, the calling thread's allocations are not recorded (frees still
// are): heapgraph's own work on a program thread (a leak scan's buffers, a check's graph, reader,
// report and symbolizer, the plugin's loading) is not the program's, must not cost recording, and
// must never show up among the program's leaks. Restores the thread's previous setting. Takes the
// recorder's heapgraph_internal_ignore_thread (heap/plugin/ScanInterface.h): called directly inside
// libheapgraph.so, RecorderEntries::Get().ignore_thread elsewhere; null (heapgraph not loaded):
// does nothing. No allocation, async-signal-safe.
#pragma once

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

class RecordingIgnored {
 public:
  explicit RecordingIgnored(HeapgraphIgnoreThreadFn ignore_thread)
      : ignore_thread_(ignore_thread), before_(ignore_thread != nullptr ? ignore_thread(1) : 0) {}
  ~RecordingIgnored() {
    if (ignore_thread_ != nullptr) ignore_thread_(before_);
  }
  RecordingIgnored(const RecordingIgnored&) = delete;
  RecordingIgnored& operator=(const RecordingIgnored&) = delete;

 private:
  HeapgraphIgnoreThreadFn ignore_thread_;
  int before_;
};

}  // namespace heapgraph
