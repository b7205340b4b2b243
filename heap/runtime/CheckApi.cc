// heap/runtime/: the public leak-check functions of include/heapgraph/heapgraph.h, defined in
// libheapgraph.so so that every documented entry point is where the recorder is: linked, or
// preloaded and found with dlsym(RTLD_DEFAULT). Each one passes its request to the checker in
// libheapgraph_scan.so (heap/plugin/ScanPlugin loads it beside this library on first use), with
// the caller's frame as the start of the program's stack. The check and the plugin's loading are
// not the program's allocations. A checker that cannot be loaded is -1 with the reason in the
// summary (and one line on stderr, from ScanPlugin). The check runs through CheckCall, which keeps
// the calling thread's frames below the caller's out of other checks' roots.
#include <stdio.h>

#include <cstdint>

#include "heap/plugin/RecordingIgnored.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/runtime/CheckCall.h"
#include "heap/runtime/LeakCheckTrigger.h"
#include "heapgraph/heapgraph.h"

using namespace heapgraph;

namespace {

int Forward(HeapgraphCheckRequest& request) {
  RecordingIgnored ignored(&heapgraph_internal_ignore_thread);
  int result = -1;
  if (CheckCall::Run(request, &result)) return result;
  if (request.summary != nullptr) {
    *request.summary = {};
    snprintf(request.summary->error, sizeof(request.summary->error),
             "cannot load the leak checker (libheapgraph_scan.so beside libheapgraph.so)");
  }
  return -1;
}

HeapgraphCheckRequest Request(const char* json_path, const char* text_path,
                              heapgraph_leak_summary* summary, uint64_t program_stack_pointer) {
  HeapgraphCheckRequest request = {};
  request.json_path = json_path;
  request.text_path = text_path;
  request.summary = summary;
  request.program_stack_pointer = program_stack_pointer;
  request.interior_pointers = 1;
  request.window = HEAPGRAPH_WINDOW_ALL;
  return request;
}

}  // namespace

extern "C" {

HEAPGRAPH_API __attribute__((noinline)) int heapgraph_check_leaks(const char* json_path,
                                                                  const char* text_path,
                                                                  heapgraph_leak_summary* summary) {
  HeapgraphCheckRequest request = Request(json_path, text_path, summary, HEAPGRAPH_CALLER_SP());
  return Forward(request);
}

HEAPGRAPH_API __attribute__((noinline)) int heapgraph_check_leaks_explain(
    const char* json_path, const char* text_path, const char* explain,
    heapgraph_leak_summary* summary) {
  HeapgraphCheckRequest request = Request(json_path, text_path, summary, HEAPGRAPH_CALLER_SP());
  request.explain = explain;
  return Forward(request);
}

HEAPGRAPH_API __attribute__((noinline)) int heapgraph_check_leaks_since(
    const char* checkpoint, const char* json_path, const char* text_path,
    heapgraph_leak_summary* summary) {
  HeapgraphCheckRequest request = Request(json_path, text_path, summary, HEAPGRAPH_CALLER_SP());
  request.window = HEAPGRAPH_WINDOW_SINCE;
  request.checkpoint = checkpoint != nullptr ? checkpoint : "";
  return Forward(request);
}

HEAPGRAPH_API __attribute__((noinline)) int heapgraph_check_leaks_changed(
    const char* json_path, const char* text_path, heapgraph_leak_summary* summary) {
  HeapgraphCheckRequest request = Request(json_path, text_path, summary, HEAPGRAPH_CALLER_SP());
  request.window = HEAPGRAPH_WINDOW_CHANGED;
  return Forward(request);
}

}  // extern "C"
