// heap/plugin/: libheapgraph_scan.so, the part of heapgraph above heap/ that tool threads inside
// the recorded process call (leak checks, the watcher's type refresh). It sits next to
// libheapgraph.so and is loaded with dlopen on first use, so the recorder keeps its dependencies
// minimal and heap/ includes nothing of the layers above it (it knows only C entry point names).
#pragma once

namespace heapgraph {

class ScanPlugin {
 public:
  // The entry point `name` of the plugin, loading it if needed; null after one line on stderr
  // ("heapgraph: cannot load <what>: <why>").
  static void* Find(const char* name, const char* what);
};

}  // namespace heapgraph
