#include "scanner/MallocHeaps.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

namespace heapgraph::scanner::MallocHeaps {
namespace {

constexpr uint64_t kPage = 4096;

// sizeof(heap_info): 32 bytes up to glibc 2.34, 48 since (a pagesize field and padding).
bool IsArenaOfHeap(uint64_t ar_ptr, uint64_t heap) {
  return ar_ptr == heap + 32 || ar_ptr == heap + 48;
}

bool IsHeapSize(uint64_t size) {
  return size != 0 && size <= kHeapMax && size % kPage == 0;
}

bool ReadWords(uint64_t address, uint64_t (&words)[4]) {
  iovec local = {words, sizeof(words)};
  iovec remote = {reinterpret_cast<void*>(address), sizeof(words)};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof(words);
}

}  // namespace

bool LooksLikeHeapInfo(uint64_t start, const uint64_t (&words)[4]) {
  const uint64_t ar_ptr = words[0], prev = words[1], size = words[2], mprotect_size = words[3];
  if (start % kHeapMax != 0 || !IsHeapSize(size) || !IsHeapSize(mprotect_size)) return false;
  if (prev == 0) return IsArenaOfHeap(ar_ptr, start);  // an arena's first heap
  // A later heap of an arena: the arena lives in that arena's first heap.
  return prev % kHeapMax == 0 && prev != start && IsArenaOfHeap(ar_ptr, ar_ptr & ~(kHeapMax - 1));
}

Ranges Find(const roots::ProcessMappings& mappings,
            std::span<const std::pair<uint64_t, uint64_t>> own) {
  auto is_own = [&](uint64_t address) {
    return std::any_of(own.begin(), own.end(),
                       [&](const auto& r) { return address >= r.first && address < r.second; });
  };
  Ranges heaps;
  for (const roots::ProcessMappings::Mapping& m : mappings.mappings()) {
    if (!m.readable || !m.writable || m.shared ||
        m.kind != roots::ProcessMappings::Kind::kAnonymous) {
      continue;
    }
    // The kernel may have merged a heap with an anonymous mapping below it: look at every
    // aligned address inside the mapping, not only at its start.
    for (uint64_t start = (m.start + kHeapMax - 1) & ~(kHeapMax - 1); start < m.end;
         start += kHeapMax) {
      uint64_t words[4];
      if (is_own(start) || !ReadWords(start, words) || !LooksLikeHeapInfo(start, words)) continue;
      uint64_t end = start + std::max(words[2], words[3]);
      heaps.push_back({start, std::min<uint64_t>(end, m.end)});
    }
  }
  return heaps;
}

}  // namespace heapgraph::scanner::MallocHeaps
