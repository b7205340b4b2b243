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

// Clears the whole pages [first, first + count * page) of the area, a run of pages alike at a
// time: a run in memory is zeroed in place; a run not in memory (never written, or swapped out) is
// dropped (MADV_DONTNEED: the next touch maps a zero page), so that a page never written is not
// faulted in to be zeroed. False if the kernel could not say which pages are in memory (the
// caller zeroes them all).
bool ClearPages(uintptr_t first, size_t count, size_t page) {
  unsigned char resident[kArea / kMinPage];
  if (ResidentPages(first, first + count * page, resident, sizeof(resident)) != count) {
    return false;
  }
  for (size_t i = 0, end = 0; i < count; i = end) {
    const bool in_memory = (resident[i] & 1) != 0;
    for (end = i + 1; end < count && ((resident[end] & 1) != 0) == in_memory;) ++end;
    void* run = reinterpret_cast<void*>(first + i * page);
    const size_t bytes = (end - i) * page;
    if (in_memory || madvise(run, bytes, MADV_DONTNEED) != 0) explicit_bzero(run, bytes);
  }
  return true;
}

}  // namespace

__attribute__((noinline)) void ScrubStackBelow() {
  char area[kArea];
  const uintptr_t begin = reinterpret_cast<uintptr_t>(area);
  const uintptr_t end = begin + sizeof(area);
  const size_t page = static_cast<size_t>(getpagesize());
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
