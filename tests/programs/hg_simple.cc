// tests/programs: a small well-behaved program. Allocates and frees a little (malloc, new, strdup,
// an anonymous mapping), computes a checksum over the data and prints
//   recording <1|0|-1>   heapgraph_is_recording() found with dlsym; -1 when not loaded
//   result <checksum>    always 499500: proves the program ran normally
// and exits 0.
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cstdint>

#include "ProgramSupport.h"

extern "C" __attribute__((noinline)) uint64_t SimpleWork() {
  auto* numbers = static_cast<uint64_t*>(malloc(1000 * sizeof(uint64_t)));
  for (uint64_t i = 0; i < 1000; ++i) numbers[i] = i;
  auto* copy = new uint64_t[1000];
  memcpy(copy, numbers, 1000 * sizeof(uint64_t));
  free(numbers);
  uint64_t sum = 0;
  for (uint64_t i = 0; i < 1000; ++i) sum += copy[i];
  hgprog::Keep(copy);
  hgprog::Keep(strdup("kept by strdup"));
  void* region =
      mmap(nullptr, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  hgprog::Keep(region);
  for (int i = 0; i < 50; ++i) hgprog::Keep(malloc(16 * (i + 1)));
  return sum;
}

int main() {
  hgprog::LineBufferedStdout();
  uint64_t sum = SimpleWork();
  auto is_recording = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "heapgraph_is_recording"));
  printf("recording %d\n", is_recording != nullptr ? is_recording() : -1);
  printf("result %ju\n", static_cast<uintmax_t>(sum));
  return 0;
}
