#include "scanner/MallocHeaps.h"

#include <algorithm>

#include "roots/RawSyscall.h"

namespace heapgraph::scanner::MallocHeaps {
namespace {

constexpr uint64_t kPage = 4096;
// libc's writable file-backed segment (.data, .got): 8 KiB on Debian 12; more is not libc's.
constexpr uint64_t kMaxLibcData = uint64_t{1} << 20;

// sizeof(heap_info): 32 bytes up to glibc 2.34, 48 since (a pagesize field and padding).
bool IsArenaOfHeap(uint64_t ar_ptr, uint64_t heap) {
  return ar_ptr == heap + 32 || ar_ptr == heap + 48;
}

bool IsHeapSize(uint64_t size) {
  return size != 0 && size <= kHeapMax && size % kPage == 0;
}

// glibc's struct malloc_state (2.26 and later, 64-bit): mutex, flags, have_fastchunks and padding
// (16 bytes), fastbinsY[10], top, last_remainder, bins[254], binmap[4], next, next_free,
// attached_threads, system_mem, max_system_mem.
constexpr uint64_t kBinsOffset = 112;
constexpr uint64_t kBinsBytes = 254 * 8;
constexpr uint64_t kNextOffset = kBinsOffset + kBinsBytes + 16;
constexpr uint64_t kArenaBytes = kNextOffset + 5 * 8;
constexpr int kMinEmptyBins = 16;

// Empty bins in `words` (read from `begin`): pairs at a 16-byte step whose two words both hold the
// pair's own address less 16 (an empty bin's list head points at itself as a fake chunk).
bool IsEmptyBin(std::span<const uint64_t> words, uint64_t begin, size_t i) {
  const uint64_t self = begin + i * 8 - 16;
  return i + 1 < words.size() && words[i] == self && words[i + 1] == self;
}

}  // namespace

// The bins array ends after its last empty bin (the largest bins, of chunks glibc maps by
// themselves, are empty), or a few bins later: that places the struct. Its `next` must be the
// struct itself (one arena) or one of `arenas`, every empty bin must lie on the bins' grid (an
// even number of words from the others, none before the array), and there must be kMinEmptyBins
// of them.
std::pair<uint64_t, uint64_t> MainArenaIn(std::span<const uint64_t> words, uint64_t begin,
                                          std::span<const uint64_t> arenas) {
  size_t first = 0, last = 0;
  int empty = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    if (!IsEmptyBin(words, begin, i)) continue;
    if (empty == 0) first = i;
    if ((i - first) % 2 != 0) return {0, 0};  // off the grid of the first
    last = i;
    ++empty;
  }
  if (empty < kMinEmptyBins) return {0, 0};
  const uint64_t end = begin + words.size() * 8;
  for (uint64_t beyond = 0; beyond < kBinsBytes; beyond += 16) {  // non-empty bins after the last
    const uint64_t bins_end = begin + last * 8 + 16 + beyond;
    if (bins_end < begin + kBinsOffset + kBinsBytes) continue;
    const uint64_t bins = bins_end - kBinsBytes;
    const uint64_t arena = bins - kBinsOffset;
    if (arena + kArenaBytes > end || begin + first * 8 < bins) break;  // and so for the next ones
    const uint64_t next = words[(arena + kNextOffset - begin) / 8];
    if (next == arena || std::find(arenas.begin(), arenas.end(), next) != arenas.end()) {
      return {arena, arena + kArenaBytes};
    }
  }
  return {0, 0};
}

namespace {

// glibc's main_arena: found in libc's writable file-backed segment.
std::pair<uint64_t, uint64_t> FindMainArena(const roots::ProcessMappings& mappings,
                                            std::span<const uint64_t> arenas) {
  for (const roots::ProcessMappings::Mapping& m : mappings.mappings()) {
    if (!m.readable || !m.writable || m.shared ||
        m.name.find("/libc.so") == std::string_view::npos || m.size() > kMaxLibcData) {
      continue;
    }
    MmapVector<uint64_t> words(m.size() / 8);
    if (!roots::RawSyscall::ReadOwnMemory(m.start, words.data(), words.size() * 8)) continue;
    const auto arena = MainArenaIn(words, m.start, arenas);
    if (arena.first != 0) return arena;
  }
  return {0, 0};
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
  MmapVector<uint64_t> arenas;
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
      if (is_own(start) || !roots::RawSyscall::ReadOwnMemory(start, words, sizeof(words)) ||
          !LooksLikeHeapInfo(start, words)) {
        continue;
      }
      uint64_t end = start + std::max(words[2], words[3]);
      heaps.push_back({start, std::min<uint64_t>(end, m.end)});
      if (words[1] == 0) arenas.push_back(words[0]);  // an arena's first heap holds the arena
    }
  }
  const auto main_arena = FindMainArena(mappings, arenas);
  if (main_arena.first != 0) heaps.push_back(main_arena);
  return heaps;
}

}  // namespace heapgraph::scanner::MallocHeaps
