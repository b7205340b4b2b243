// scanner/: fresh anonymous memory for the scan's arrays (MmapAllocator, PagePool), by raw system
// calls (never the host's malloc). A mapping of kHugeBytes or more is advised MADV_HUGEPAGE: the
// scan of a large heap fills arrays of tens of megabytes page by page, and where transparent huge
// pages are on for advised memory (Debian's default: `madvise`) one fault maps 2 MiB instead of
// 4 KiB. On a Firecracker guest a 4 KiB first touch costs ≈ 14 µs and 64 MiB filled took 258 ms
// with small pages against 5-156 ms with huge ones (docs/performance.md, session 33). The advice is
// only advice: refused or unsupported, the mapping stays as it is. Includes libc only.
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

namespace heapgraph::scanner::ArrayMapping {

inline constexpr size_t kHugeBytes = size_t{2} << 20;

// `bytes` of private anonymous read-write memory, or null (errno set).
inline void* Map(size_t bytes) {
  const long r =
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r < 0 && r > -4096) return nullptr;
  if (bytes >= kHugeBytes) syscall(SYS_madvise, r, bytes, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(r);
}

}  // namespace heapgraph::scanner::ArrayMapping
