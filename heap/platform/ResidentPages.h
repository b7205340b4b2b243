// heap/platform/: which pages of an address range are in memory (mincore(2)), into a caller's
// buffer: no allocation, usable in hooks, in a check's stopped world and in the scan's helper. A
// page not in memory was never written, was dropped (MADV_DONTNEED), or is swapped out: mincore
// does not tell these apart, so a caller that skips such pages must accept missing a swapped-out
// one. Includes libc only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

// One byte per page of [begin, end), from the page holding `begin`: bit 0 set when the page is in
// memory. Returns the number of pages described, or 0 when `end <= begin`, when they are more than
// `capacity`, or when the kernel cannot say (a part of the range is not mapped).
size_t ResidentPages(uintptr_t begin, uintptr_t end, unsigned char* out, size_t capacity);

}  // namespace heapgraph
