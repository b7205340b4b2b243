// tests/scanner: MallocHeaps finds glibc's thread-arena heaps in this process's real mappings
// without reading heapgraph's own, and its heap_info shape check refuses what is not one. Not
// sanitized (ASan replaces glibc's malloc).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

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
    EXPECT_EQ(begin % MallocHeaps::kHeapMax, 0u);
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
}  // namespace heapgraph::scanner
