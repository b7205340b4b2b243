#include "heap/platform/ResidentPages.h"

#include <sys/mman.h>
#include <unistd.h>

namespace heapgraph {

size_t ResidentPages(uintptr_t begin, uintptr_t end, unsigned char* out, size_t capacity) {
  if (end <= begin) return 0;
  const uintptr_t page = static_cast<uintptr_t>(getpagesize());
  const uintptr_t first = begin & ~(page - 1);
  const size_t pages = static_cast<size_t>((end - first + page - 1) / page);
  if (pages > capacity || mincore(reinterpret_cast<void*>(first), pages * page, out) != 0) return 0;
  return pages;
}

}  // namespace heapgraph
