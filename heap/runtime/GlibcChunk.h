// heap/runtime/: what glibc's malloc chunk header says about a block it handed out. Every block
// the recorder sees comes from glibc (the hooks call __libc_malloc and friends), so the size word
// right before the block is glibc's chunk header: the chunk size with three flag bits, bit 1 set
// when the chunk is a mapping of its own (mmap'd: its pages came zeroed from the kernel). Header
// only, no state; reading a block's header is safe for any live glibc block.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph::glibc_chunk {

inline size_t Header(const void* block) {
  return static_cast<const size_t*>(block)[-1];
}

inline bool IsMmapped(const void* block) {
  return (Header(block) & 2) != 0;
}

// Starts fetching the line of the header (free reads it first, and writes the lines around it):
// a hook that frees a block the program has not touched for a while overlaps that miss with its
// own work. Only a hint: never faults, even for an address that is not a block.
inline void PrefetchHeader(const void* block) {
  __builtin_prefetch(static_cast<const size_t*>(block) - 1);
}

// The usable size glibc gives a heap (not mmap'd) chunk for a request of `n` bytes: its chunk is
// max(32, n + 8 rounded up to 16) bytes, all but the 8-byte size word usable.
inline size_t UsableFor(size_t n) {
  size_t chunk = (n + sizeof(size_t) + 15) & ~size_t{15};
  if (chunk < 32) chunk = 32;
  return chunk - sizeof(size_t);
}

// What malloc_usable_size gives, from the header alone.
inline size_t UsableSize(const void* block) {
  size_t chunk = Header(block) & ~size_t{7};
  return chunk - (IsMmapped(block) ? 2 * sizeof(size_t) : sizeof(size_t));
}

}  // namespace heapgraph::glibc_chunk
