// tests/programs: LeakSanitizer's Linux/leak_check_segv shape, for
// tests/scanner/UnreadablePagesProgramTest (issue 12, item 4): a reachable 10 MiB malloc block
// (an mmap'd chunk) and a 10 MiB global array, each with 16 KiB made PROT_NONE, then 3 leaked
// blocks of 2,720 bytes (the dead stack below main scrubbed). Run under `heapgraph run`, whose
// check at exit must give a normal report (LeakSanitizer itself dies there: "Tracer caught signal
// 11"). A plain program: libheapgraph.so is preloaded. Prints "DONE" on stderr and exits 0.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "ProgramSupport.h"

namespace {

char g_data[10 * 1024 * 1024];
void* volatile g_keep;

void* PageAbove(const void* p) {
  auto mask = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE) - 1);
  return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(p) + mask) & ~mask);
}

}  // namespace

int main() {
  void* p = malloc(10 * 1024 * 1024);
  g_keep = p;
  if (mprotect(PageAbove(p), 16 * 1024, PROT_NONE) != 0 ||
      mprotect(PageAbove(g_data), 16 * 1024, PROT_NONE) != 0) {
    perror("mprotect");
    return 1;
  }
  hgprog::LeakBlocks(3, 2720);
  hgprog::ScrubStack();
  fprintf(stderr, "DONE\n");
  return 0;
}
