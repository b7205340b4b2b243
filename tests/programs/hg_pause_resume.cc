// tests/programs: links libheapgraph directly and drives the C API:
//   before_pause <address>   malloc(1111), recorded
//   freed_paused <address>   malloc(2222), freed while paused: must be gone
//   while_paused <address>   malloc(3333) while paused: never recorded
//   after_resume <address>   malloc(4444) after resume, recorded
//   recording <before> <paused> <resumed>   heapgraph_is_recording() at each step
//   dir <path>               heapgraph_recording_dir()
//   set_options_rejected <n> heapgraph_set_options("depth=16,bogus=1") (expects 1)
// then "ready" and waits for stdin to close.
#include <stdlib.h>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

__attribute__((noinline)) void* Allocate(size_t size) {
  void* p = malloc(size);
  hgprog::Keep(p);
  return p;
}

}  // namespace

int main() {
  hgprog::LineBufferedStdout();
  void* before = Allocate(1111);
  void* freed = Allocate(2222);
  int recording_before = heapgraph_is_recording();
  heapgraph_pause();
  int recording_paused = heapgraph_is_recording();
  void* paused = Allocate(3333);
  free(freed);
  heapgraph_resume();
  int recording_resumed = heapgraph_is_recording();
  void* after = Allocate(4444);
  hgprog::PrintAddress("before_pause", before);
  hgprog::PrintAddress("freed_paused", freed);
  hgprog::PrintAddress("while_paused", paused);
  hgprog::PrintAddress("after_resume", after);
  printf("recording %d %d %d\n", recording_before, recording_paused, recording_resumed);
  const char* dir = heapgraph_recording_dir();
  printf("dir %s\n", dir != nullptr ? dir : "(null)");
  printf("set_options_rejected %d\n", heapgraph_set_options("depth=16,bogus=1"));
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
