// tests/scanner: MallocHeaps finds glibc's thread-arena heaps in this process's real mappings
// without reading heapgraph's own, and its heap_info shape check refuses what is not one; it finds
// main_arena in libc's data by its bins, and refuses a struct of another shape. Not sanitized
// (ASan replaces glibc's malloc).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "scanner/MallocHeaps.h"

namespace heapgraph::scanner {
namespace {

// A block malloc'd on a new thread, which glibc serves from a thread arena.
void* ThreadBlock() {
  void* block = nullptr;
  pthread_t t;
  pthread_create(
      &t, nullptr,
      [](void* out) -> void* {
        *static_cast<void**>(out) = std::malloc(100);
        return nullptr;
      },
      &block);
  pthread_join(t, nullptr);
  return block;
}

TEST(MallocHeapsTest, FindsTheHeapOfAThreadArena) {
  void* block = ThreadBlock();
  ASSERT_NE(block, nullptr);
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read()) << mappings.error();
  auto address = reinterpret_cast<uint64_t>(block);
  bool found = false;
  for (auto [begin, end] : MallocHeaps::Find(mappings)) {
    const roots::ProcessMappings::Mapping* m = mappings.Find(begin);
    const bool libc = m != nullptr && m->name.find("/libc.so") != std::string_view::npos;
    if (!libc) {  // a heap; else main_arena
      EXPECT_EQ(begin % MallocHeaps::kHeapMax, 0u);
    }
    found = found || (address >= begin && address < end);
  }
  EXPECT_TRUE(found) << "no heap holds " << block;
  std::free(block);
}

TEST(MallocHeapsTest, NeverTakesTheMainArenaOrAProgramBuffer) {
  // The main arena: the brk heap, not a thread heap. Not ThreadBlock's size: the other tests free
  // their thread-arena blocks on this thread, into its cache of blocks of that size.
  void* block = std::malloc(232);
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read()) << mappings.error();
  auto address = reinterpret_cast<uint64_t>(block);
  for (auto [begin, end] : MallocHeaps::Find(mappings)) {
    EXPECT_FALSE(address >= begin && address < end);
  }
  std::free(block);
}

// heapgraph's own reservations (the recorder's free-slot stacks are 2 GiB) hold no heap: their
// aligned addresses are not read, so their pages stay unmapped (a read of a page never written
// maps it).
TEST(MallocHeapsTest, ReadsNoAlignedAddressOfHeapgraphsOwnMemory) {
  const size_t size = 8 * MallocHeaps::kHeapMax;
  void* own = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(own, MAP_FAILED);
  const auto begin = reinterpret_cast<uint64_t>(own);
  const std::pair<uint64_t, uint64_t> own_ranges[] = {{begin, begin + size}};
  void* block = ThreadBlock();
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read()) << mappings.error();
  bool found = false;
  for (auto [heap_begin, heap_end] : MallocHeaps::Find(mappings, own_ranges)) {
    const auto address = reinterpret_cast<uint64_t>(block);
    found = found || (address >= heap_begin && address < heap_end);
  }
  EXPECT_TRUE(found) << "no heap holds " << block;
  const uint64_t first = (begin + MallocHeaps::kHeapMax - 1) & ~(MallocHeaps::kHeapMax - 1);
  for (uint64_t at = first; at < begin + size; at += MallocHeaps::kHeapMax) {
    unsigned char resident = 1;
    ASSERT_EQ(0, mincore(reinterpret_cast<void*>(at), 4096, &resident));
    EXPECT_EQ(0, resident & 1) << std::hex << at;
  }
  std::free(block);
  munmap(own, size);
}

TEST(MallocHeapsTest, ShapeOfAHeapInfo) {
  const uint64_t heap = 7 * MallocHeaps::kHeapMax;
  const uint64_t first[4] = {heap + 48, 0, 132 << 12, 132 << 12};  // glibc >= 2.35
  EXPECT_TRUE(MallocHeaps::LooksLikeHeapInfo(heap, first));
  const uint64_t old_first[4] = {heap + 32, 0, 33 << 12, 40 << 12};  // glibc <= 2.34
  EXPECT_TRUE(MallocHeaps::LooksLikeHeapInfo(heap, old_first));
  const uint64_t later[4] = {heap - 3 * MallocHeaps::kHeapMax + 48, heap - MallocHeaps::kHeapMax,
                             1 << 12, 1 << 12};
  EXPECT_TRUE(MallocHeaps::LooksLikeHeapInfo(heap, later));

  EXPECT_FALSE(MallocHeaps::LooksLikeHeapInfo(heap + 4096, first));  // not 64 MiB-aligned
  const uint64_t elsewhere[4] = {heap + 4096, 0, 1 << 12, 1 << 12};  // arena not right after
  EXPECT_FALSE(MallocHeaps::LooksLikeHeapInfo(heap, elsewhere));
  const uint64_t huge[4] = {heap + 48, 0, MallocHeaps::kHeapMax + 4096, 1 << 12};
  EXPECT_FALSE(MallocHeaps::LooksLikeHeapInfo(heap, huge));
  const uint64_t odd[4] = {heap + 48, 0, 100, 1 << 12};  // not a page multiple
  EXPECT_FALSE(MallocHeaps::LooksLikeHeapInfo(heap, odd));
  const uint64_t zeros[4] = {};
  EXPECT_FALSE(MallocHeaps::LooksLikeHeapInfo(heap, zeros));
}

}  // namespace
// A fake main_arena (glibc's struct malloc_state) at word `at` of `words`: every bin empty (its
// two words point 16 bytes before themselves) but the last `full` ones, `next` as given.
struct FakeLibcData {
  static constexpr size_t kAt = 128;  // words before the struct
  std::vector<uint64_t> words = std::vector<uint64_t>(1024, 0);
  uint64_t Address(size_t word) const { return reinterpret_cast<uint64_t>(&words[word]); }
  uint64_t arena() const { return Address(kAt); }
  FakeLibcData(int full, uint64_t next) {
    for (size_t bin = 0; bin < 127; ++bin) {
      const size_t w = kAt + 14 + 2 * bin;
      const bool empty = bin + full < 127;
      words[w] = words[w + 1] = empty ? Address(w) - 16 : 0x5555'0000'1000 + 32 * bin;
    }
    words[kAt + 270] = next == 0 ? arena() : next;  // at 2160 bytes
  }
  std::pair<uint64_t, uint64_t> Find(std::span<const uint64_t> arenas = {}) const {
    return MallocHeaps::MainArenaIn(words, Address(0), arenas);
  }
};

TEST(MallocHeapsTest, TheMainArenaIsFoundByItsEmptyBins) {
  FakeLibcData one(0, 0);
  EXPECT_EQ(one.Find(), std::make_pair(one.arena(), one.arena() + 2200));
  FakeLibcData largest_bins_full(3, 0);  // the bins end three bins after the last empty one
  EXPECT_EQ(largest_bins_full.Find(),
            std::make_pair(largest_bins_full.arena(), largest_bins_full.arena() + 2200));
  const uint64_t thread_arena = 0x7f00'0000'0030;
  FakeLibcData two(0, thread_arena);
  EXPECT_EQ(two.Find(), std::make_pair(uint64_t{0}, uint64_t{0})) << "next is no known arena";
  const uint64_t arenas[] = {thread_arena};
  EXPECT_EQ(two.Find(arenas), std::make_pair(two.arena(), two.arena() + 2200));
  FakeLibcData few(120, 0);  // 7 empty bins: not the shape
  EXPECT_EQ(few.Find(), std::make_pair(uint64_t{0}, uint64_t{0}));
}

// In this process: main_arena's bytes lie in libc's writable data, and its `top` (at 96) is a chunk
// of the brk heap.
TEST(MallocHeapsTest, TakesTheMainArenaOutOfLibcsData) {
  void* block = std::malloc(232);
  roots::ProcessMappings mappings;
  ASSERT_TRUE(mappings.Read()) << mappings.error();
  int found = 0;
  for (auto [begin, end] : MallocHeaps::Find(mappings)) {
    const roots::ProcessMappings::Mapping* m = mappings.Find(begin);
    if (m == nullptr || m->name.find("/libc.so") == std::string_view::npos) continue;
    ++found;
    EXPECT_EQ(end - begin, 2200u);
    const uint64_t top = *reinterpret_cast<const uint64_t*>(begin + 96);
    const roots::ProcessMappings::Mapping* heap = mappings.Find(top);
    ASSERT_NE(heap, nullptr);
    EXPECT_EQ(heap->name, "[heap]");
  }
  EXPECT_EQ(found, 1);
  std::free(block);
}

}  // namespace heapgraph::scanner
