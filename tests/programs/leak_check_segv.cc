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

namespace {

char g_data[10 * 1024 * 1024];
void* volatile g_keep;
void* volatile g_sink;

extern "C" __attribute__((noinline, used)) void LeakBlocks() {
  for (int i = 0; i < 3; ++i) {
    void* p = malloc(2720);
    memset(p, 0, 2720);
    g_sink = p;
  }
  g_sink = nullptr;
}

// Overwrites the dead stack below the caller, where malloc and the recorder's hook left copies of
// the leaked pointers: the exit path's frames reuse that area (the check runs at exit), and an
// uninitialized slot of a live frame would keep a leak "reachable".
extern "C" __attribute__((noinline, used)) void ScrubStack() {
  char buffer[64 * 1024];
  memset(buffer, 0, sizeof(buffer));
  asm volatile("" : : "r"(buffer) : "memory");
}

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
  LeakBlocks();
  ScrubStack();
  fprintf(stderr, "DONE\n");
  return 0;
}
