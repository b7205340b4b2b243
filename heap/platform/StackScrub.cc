#include "heap/platform/StackScrub.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "heap/platform/ResidentPages.h"

namespace heapgraph {
namespace {

constexpr size_t kArea = 64 * 1024;
constexpr size_t kMinPage = 4096;

// Clears the whole pages [first, first + count * page) of the area: a page in memory is zeroed in
// place; the others, never written or swapped out, are dropped (MADV_DONTNEED: the next touch
// maps a zero page), so that a page never written is not faulted in to be zeroed. False if the
// kernel could not say which pages are in memory (the caller zeroes them all).
bool ClearPages(uintptr_t first, size_t count, size_t page) {
  unsigned char resident[kArea / kMinPage];
  if (ResidentPages(first, first + count * page, resident, sizeof(resident)) != count) {
    return false;
  }
  size_t absent_from = count;  // the start of the current run of pages not in memory
  for (size_t i = 0; i <= count; ++i) {
    const bool in_memory = i < count && (resident[i] & 1) != 0;
    if (i < count && !in_memory) {
      if (absent_from == count) absent_from = i;
      continue;
    }
    if (absent_from != count) {
      void* run = reinterpret_cast<void*>(first + absent_from * page);
      if (madvise(run, (i - absent_from) * page, MADV_DONTNEED) != 0) {
        explicit_bzero(run, (i - absent_from) * page);
      }
      absent_from = count;
    }
    if (in_memory) explicit_bzero(reinterpret_cast<void*>(first + i * page), page);
  }
  return true;
}

}  // namespace

__attribute__((noinline)) void ScrubStackBelow() {
  char area[kArea];
  const uintptr_t begin = reinterpret_cast<uintptr_t>(area);
  const uintptr_t end = begin + sizeof(area);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) & ~(page - 1);
  const uintptr_t last = end & ~(page - 1);
  if (page < kMinPage || first >= last || !ClearPages(first, (last - first) / page, page)) {
    explicit_bzero(area, sizeof(area));
  } else {
    explicit_bzero(area, first - begin);  // the partial pages at either end
    explicit_bzero(reinterpret_cast<void*>(last), end - last);
  }
  asm volatile("" : : "r"(area) : "memory");
}

}  // namespace heapgraph
