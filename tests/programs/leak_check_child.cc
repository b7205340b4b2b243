// Child program for LeakCheckTriggerTest. Modes:
//   api     leaks 3 blocks, checks, leaks 2 more, checks again; prints "checks <n1> <n2>"
//   signal  leaks 4 blocks, prints "ready <recording dir>", then sleeps until killed
//   clean   leaks nothing and exits with status 7
//   leaky   leaks one block and exits with status 0
//   stale   leaks one 300-byte block whose address it first copies all over the 4 KiB below
//           main's frame (where exit's and its handlers' frames will lie), then exits with 0
//   stale-exit  the same, then calls exit(0) itself
//   fault   prints "faulting", then writes through a null pointer (a real SIGSEGV)
//   sizes DIR  leaks 3 blocks and checks into DIR/small.json, then keeps 6 MiB of blocks reachable,
//           leaks 2 more and checks into DIR/large.json, then frees them, keeps 6,000 blocks of
//           48 bytes and checks into DIR/many.json; prints "checks <n1> <n2> <n3>"
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

void* volatile g_sink;

// Allocates and drops the pointer; the stack below is scrubbed by the next call's frames.
int Api() {
  hgprog::LeakBlocks(3, 200);
  heapgraph_leak_summary first, second;
  int n1 = heapgraph_check_leaks(nullptr, nullptr, &first);
  hgprog::LeakBlocks(2, 200);
  int n2 = heapgraph_check_leaks(nullptr, nullptr, &second);
  if (n1 < 0 || n2 < 0) {
    std::printf("failed %s%s\n", first.error, second.error);
    return 1;
  }
  std::printf("checks %d %d\n", n1, n2);
  return 0;
}

// The check of a heap of at most 4,096 blocks and 4 MiB scans in place, a larger one with a
// snapshot process (check/LeakCheck.cc, kInPlaceMaxLiveBlocks and kInPlaceMaxLiveBytes): all find
// the same leaks.
void* g_kept[96];
void* g_many[6000];

int Sizes(const char* dir) {
  hgprog::LeakBlocks(3, 200);
  heapgraph_leak_summary first, second, third;
  std::string path = dir;
  int n1 = heapgraph_check_leaks((path + "/small.json").c_str(), nullptr, &first);
  for (void*& block : g_kept) block = malloc(64 * 1024);
  hgprog::LeakBlocks(2, 200);
  int n2 = heapgraph_check_leaks((path + "/large.json").c_str(), nullptr, &second);
  for (void* block : g_kept) free(block);
  for (void*& block : g_many) block = malloc(48);
  int n3 = heapgraph_check_leaks((path + "/many.json").c_str(), nullptr, &third);
  if (n1 < 0 || n2 < 0 || n3 < 0) {
    std::printf("failed %s%s%s\n", first.error, second.error, third.error);
    return 1;
  }
  std::printf("checks %d %d %d\n", n1, n2, n3);
  return 0;
}

int Signal() {
  hgprog::LeakBlocks(4, 200);
  hgprog::ScrubStack();  // the allocations' dead frames lie where printf's and usleep's will
  std::printf("ready %s\n", heapgraph_recording_dir());
  std::fflush(stdout);
  for (int i = 0; i < 600; ++i) usleep(100 * 1000);
  return 0;
}

// Fills the stack below the caller with copies of `p`: dead once this returns, like the frames
// an earlier call leaves behind.
__attribute__((noinline)) void SprayBelow(void* p) {
  void* volatile slots[512];
  for (void* volatile& slot : slots) slot = p;
}

void LeakWithStaleCopies() {
  void* p = malloc(300);
  memset(p, 0x11, 300);
  SprayBelow(p);
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "api") == 0) return Api();
  if (std::strcmp(mode, "signal") == 0) return Signal();
  if (std::strcmp(mode, "sizes") == 0 && argc > 2) return Sizes(argv[2]);
  if (std::strcmp(mode, "leaky") == 0) {
    hgprog::LeakBlocks(1, 200);
    return 0;
  }
  if (std::strcmp(mode, "stale") == 0) {
    LeakWithStaleCopies();
    return 0;
  }
  if (std::strcmp(mode, "stale-exit") == 0) {
    LeakWithStaleCopies();
    std::exit(0);  // through the recorder's exit() wrapper, not glibc's own call from main
  }
  if (std::strcmp(mode, "fault") == 0) {
    std::printf("faulting\n");
    std::fflush(stdout);
    *static_cast<volatile int*>(g_sink) = 1;  // g_sink is null here
  }
  return 7;
}
