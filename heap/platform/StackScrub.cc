#include "heap/platform/StackScrub.h"

#include <string.h>

namespace heapgraph {

__attribute__((noinline)) void ScrubStackBelow() {
  char area[64 * 1024];
  explicit_bzero(area, sizeof(area));
  asm volatile("" : : "r"(area) : "memory");
}

}  // namespace heapgraph
