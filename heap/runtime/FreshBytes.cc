#include "heap/runtime/FreshBytes.h"

#include <cstdint>
#include <cstring>

#include "heap/runtime/GlibcChunk.h"

namespace heapgraph {
namespace {

constexpr size_t kMemsetLimit = 64 * 1024;

// Writes only the words that are not zero already: a page never touched is read (the kernel maps
// its shared zero page) but never written, so it costs no memory.
void ClearNonZeroWords(char* begin, char* end) {
  char* first_word =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(begin) + 7) & ~uintptr_t{7});
  char* last_word = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(end) & ~uintptr_t{7});
  memset(begin, 0, static_cast<size_t>(first_word - begin));
  for (auto* w = reinterpret_cast<uint64_t*>(first_word);
       w < reinterpret_cast<uint64_t*>(last_word); ++w) {
    if (*w != 0) *w = 0;
  }
  memset(last_word, 0, static_cast<size_t>(end - last_word));
}

}  // namespace

void ClearFreshBytes(void* block, size_t begin, size_t end) {
  if (block == nullptr || begin >= end) return;
  char* p = static_cast<char*>(block);
  if (end - begin <= kMemsetLimit) {
    memset(p + begin, 0, end - begin);
  } else if (!glibc_chunk::IsMmapped(block)) {
    ClearNonZeroWords(p + begin, p + end);
  }
}

}  // namespace heapgraph
