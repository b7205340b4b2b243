// tests/heap/runtime/LeakCheckTriggerTest's child: a C program linked with libheapgraph.so and
// libheapgraph_scan.so (as a test build links them), whose full check through the public API
// must report its one leak and nothing of heapgraph's: the plugin's static libstdc++ allocates
// its exception pool when it is loaded, here at start, while the recorder records.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapgraph/heapgraph.h"

void* volatile g_sink;

static void __attribute__((noinline)) Leak(void) {
  char* block = malloc(100);
  memset(block, 1, 100);
  g_sink = block;
  g_sink = NULL;
}

int main(int argc, char** argv) {
  Leak();
  heapgraph_leak_summary summary;
  memset(&summary, 0, sizeof(summary));
  int leaked = heapgraph_check_leaks(argc > 1 ? argv[1] : "", "", &summary);
  printf("leaked %d blocks %llu bytes\n", leaked, (unsigned long long)summary.leaked_bytes);
  return 0;
}
