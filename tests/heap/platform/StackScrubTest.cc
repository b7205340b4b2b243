// tests/heap: ScrubStackBelow, on real threads whose stacks this test maps, so that it can read
// them from outside afterwards. Words left below a frame by deeper calls are gone after a scrub
// from that frame (below the scrub's own frame); and on a stack never used that deep, the scrub
// writes none of the area's whole pages (mincore: they stay out of memory) yet leaves them reading
// as zeros.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "heap/platform/StackScrub.h"

namespace heapgraph {
namespace {

constexpr size_t kStack = 1 << 20;
constexpr uint64_t kStale = 0x5a5a'1234'5678'a5a5;

// A stack mapped here; the thread's frames and glibc's thread block live in its top part.
struct MappedStack {
  MappedStack() {
    base = static_cast<char*>(mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  }
  ~MappedStack() {
    if (base != MAP_FAILED) munmap(base, kStack);
  }
  void Run(void* (*body)(void*)) {
    ASSERT_NE(base, MAP_FAILED);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, base, kStack);
    pthread_t thread;
    ASSERT_EQ(0, pthread_create(&thread, &attr, body, this));
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attr);
  }
  // Words equal to `word` in [begin, end) of the stack.
  static size_t Count(uint64_t word, const char* begin, const char* end) {
    size_t n = 0;
    for (const char* at = begin; at + 8 <= end; at += 8) {
      uint64_t w;
      std::memcpy(&w, at, 8);
      n += w == word;
    }
    return n;
  }
  // Pages of [begin, end) in memory.
  static size_t ResidentPages(const char* begin, const char* end) {
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
    const uintptr_t last = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
    if (first >= last) return 0;
    std::vector<unsigned char> resident((last - first) / page);
    if (mincore(reinterpret_cast<void*>(first), last - first, resident.data()) != 0)
      return SIZE_MAX;
    size_t n = 0;
    for (unsigned char r : resident) n += r & 1;
    return n;
  }
  char* base = static_cast<char*>(MAP_FAILED);
  char* frame = nullptr;  // a local of the thread's function, which calls the scrub
};

__attribute__((noinline)) void LeaveStaleWords() {
  volatile uint64_t words[40 * 1024 / 8];
  for (size_t i = 0; i < sizeof(words) / 8; ++i) words[i] = kStale;
}

__attribute__((noinline)) void* DirtyThenScrub(void* arg) {
  volatile char here = 0;
  static_cast<MappedStack*>(arg)->frame = const_cast<char*>(&here);
  LeaveStaleWords();
  ScrubStackBelow();
  return nullptr;
}

__attribute__((noinline)) void* ScrubOnly(void* arg) {
  volatile char here = 0;
  static_cast<MappedStack*>(arg)->frame = const_cast<char*>(&here);
  ScrubStackBelow();
  return nullptr;
}

TEST(StackScrubTest, ClearsTheWordsDeeperCallsLeftBelow) {
  MappedStack stack;
  stack.Run(&DirtyThenScrub);
  ASSERT_NE(nullptr, stack.frame);
  // In the area, below the scrub's own frame (its saved registers and padding, which it does not
  // clear); the dynamic linker's lazy binding of a call made during the scrub may save registers
  // deeper still, below the area.
  EXPECT_EQ(0u, stack.Count(kStale, stack.frame - 60 * 1024, stack.frame - 512));
}

TEST(StackScrubTest, FaultsInNoPageAStackNeverUsedThatDeep) {
  MappedStack stack;
  stack.Run(&ScrubOnly);
  ASSERT_NE(nullptr, stack.frame);
  // The area: the 64 KiB below the scrubbing frame (less its own frame's few hundred bytes and
  // the partial pages at either end, which are zeroed in place). Zeroing it wrote 16 pages.
  const char* low = stack.frame - 60 * 1024;
  const char* high = stack.frame - 8 * 1024;
  ASSERT_GT(low, stack.base);
  EXPECT_EQ(0u, MappedStack::ResidentPages(low, high));
  for (const char* at = low; at < high; at += 4096) ASSERT_EQ(0, *at);  // reads as zeros
}

}  // namespace
}  // namespace heapgraph
