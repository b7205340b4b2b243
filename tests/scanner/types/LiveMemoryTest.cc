// tests/scanner/types: LiveMemory copies this process's memory with process_vm_readv: reads inside
// a mapping succeed (near ones from a window, not a new copy), reads of unmapped memory or across
// into it fail without a fault, a window filled before a change is refilled elsewhere; and
// SnapshotMemory over it keeps its own range checks and serves BlockWords from copies.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "scanner/types/LiveMemory.h"
#include "scanner/types/SnapshotMemory.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

// The address as a value the compiler cannot follow back to the object (no bounds warnings on
// reads that the checks under test refuse).
uint64_t Address(const void* p) {
  uint64_t v = reinterpret_cast<uint64_t>(p);
  asm volatile("" : "+r"(v));
  return v;
}

TEST(LiveMemoryTest, ReadsMappedMemoryThroughWindowsAndNeverFaults) {
  // Two pages readable, the third inaccessible. PROT_NONE rather than unmapped: an unmapped hole
  // can be handed to the next mmap (ASan's, the reader's own) and become readable meanwhile.
  auto* pages = static_cast<uint64_t*>(
      mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(reinterpret_cast<char*>(pages) + 2 * 4096, 4096, PROT_NONE), 0);
  for (size_t i = 0; i < 1024; ++i) pages[i] = i;

  LiveMemory live;
  uint64_t word = 0;
  ASSERT_TRUE(live.Read(Address(&pages[3]), &word, 8));
  EXPECT_EQ(word, 3u);
  uint64_t copies = live.copies();
  for (size_t i = 4; i < 1024; ++i) {
    ASSERT_TRUE(live.Read(Address(&pages[i]), &word, 8));
    EXPECT_EQ(word, i);
  }
  EXPECT_EQ(live.copies(), copies);  // all from the window filled by the first read
  char last[16];
  EXPECT_FALSE(live.Read(Address(pages) + 2 * 4096 - 8, last, 16));  // into the PROT_NONE page
  EXPECT_FALSE(live.Read(Address(pages) + 2 * 4096, &word, 8));
  EXPECT_FALSE(live.Read(0, &word, 8));
  EXPECT_FALSE(live.Read(UINT64_MAX - 3, &word, 8));
  // Made inaccessible after it was read: the window copy may still answer (a stale snapshot), but
  // a read outside every window goes to the kernel and fails.
  ASSERT_EQ(mprotect(pages, 2 * 4096, PROT_NONE), 0);
  LiveMemory fresh;
  EXPECT_FALSE(fresh.Read(Address(&pages[5]), &word, 8));
  munmap(pages, 3 * 4096);
}

TEST(LiveMemoryTest, SnapshotMemoryOverLiveReadsChecksRangesAndCopiesBlockWords) {
  auto* block = new uint64_t[300];
  for (uint64_t i = 0; i < 300; ++i) block[i] = i * 3;
  test::Blocks blocks({test::Range(block, 300 * 8)});
  LiveMemory live;
  SnapshotMemory memory(blocks.memory->blocks(), blocks.memory->modules(), live);
  uint64_t word = 0;
  EXPECT_TRUE(memory.ReadWord(Address(block + 299), &word));
  EXPECT_EQ(word, 897u);
  EXPECT_FALSE(memory.ReadWord(Address(block + 300), &word));  // past the block
  EXPECT_FALSE(memory.ReadWord(Address(&word), &word));        // the stack: no block, no module
  uint64_t scratch[100];
  const uint64_t* words = memory.BlockWords(0, 200, 100, scratch);
  ASSERT_EQ(words, scratch);  // a copy, not the block itself
  EXPECT_EQ(words[99], 897u);
  EXPECT_EQ(memory.BlockWords(0, 201, 100, scratch), nullptr);  // past the block
  // Without LiveMemory (a snapshot), the block itself.
  EXPECT_EQ(blocks.memory->BlockWords(0, 200, 100, scratch), block + 200);
  delete[] block;
}

}  // namespace
}  // namespace heapgraph::scanner::types
