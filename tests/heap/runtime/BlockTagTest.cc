// tests/heap/runtime: the block tag on glibc's own blocks (__libc_malloc and friends, what the
// interposer calls, so the test holds under ASan too): PaddedRequest leaves room for a tag behind
// every size glibc's malloc, calloc and realloc are asked for, and pads only when the chunk would
// not (a quarter of the sizes); a written tag reads back as its slot, and a cleared one as a slot
// no tree of fewer than 1024 shards has.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "heap/runtime/BlockTag.h"
#include "heap/runtime/GlibcAllocator.h"

namespace heapgraph {
namespace {

std::vector<size_t> Sizes() {
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 5000; ++n) sizes.push_back(n);
  for (size_t n = 60000; n <= 70000; n += 7) sizes.push_back(n);
  for (size_t n : {size_t{131072}, size_t{200000}, size_t{1} << 20, (size_t{1} << 22) + 3}) {
    sizes.push_back(n);
  }
  return sizes;
}

TEST(BlockTagTest, PaddedRequestsLeaveRoomForTheTagAtEverySize) {
  for (size_t n : Sizes()) {
    const size_t request = block_tag::PaddedRequest(n);
    void* m = __libc_malloc(request);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(block_tag::Fits(m, n)) << "malloc " << n;
    void* c = __libc_calloc(1, request);
    EXPECT_TRUE(block_tag::Fits(c, n)) << "calloc " << n;
    void* r = __libc_realloc(c, block_tag::PaddedRequest(n + 100));
    EXPECT_TRUE(block_tag::Fits(r, n + 100)) << "realloc " << n;
    __libc_free(m);
    __libc_free(r);
  }
}

TEST(BlockTagTest, PadsOnlyWhenTheChunkWouldLeaveTooFewBytes) {
  size_t padded = 0, sizes = 0;
  for (size_t n = 0; n <= 4096; ++n, ++sizes) {
    const size_t request = block_tag::PaddedRequest(n);
    void* plain = __libc_malloc(n);
    const bool room = block_tag::Fits(plain, n);
    __libc_free(plain);
    EXPECT_EQ(room ? n : n + block_tag::kBytes, request) << n;
    padded += request != n;
  }
  printf("[ figure   ] %zu of %zu sizes up to 4 KiB padded\n", padded, sizes);
  EXPECT_LT(padded, sizes * 3 / 10);
}

TEST(BlockTagTest, AWrittenTagReadsBackAsItsSlotAndZeroesNameTheLastSlot) {
  auto* a = static_cast<char*>(__libc_malloc(block_tag::PaddedRequest(40)));
  memset(a, 0, glibc_chunk::UsableSize(a));
  uint32_t shard = 0, index = 0;
  block_tag::Read(a, &shard, &index);
  EXPECT_EQ((1u << block_tag::kShardBits) - 1, shard) << "zeroes name shard 1023's last slot";
  EXPECT_EQ((1u << block_tag::kIndexBits) - 1, index);
  block_tag::Write(a, 1023, (1u << 22) - 2);
  block_tag::Read(a, &shard, &index);
  EXPECT_EQ(1023u, shard);
  EXPECT_EQ((1u << 22) - 2, index);
  block_tag::Write(a, 0, 0);
  block_tag::Read(a, &shard, &index);
  EXPECT_EQ(0u, shard);
  EXPECT_EQ(0u, index);
  block_tag::Write(a, 5, 77);
  block_tag::Read(a, &shard, &index);
  EXPECT_EQ(5u, shard);
  EXPECT_EQ(77u, index);
  EXPECT_EQ(0, a[39]) << "the tag stays behind the program's bytes";
  block_tag::Clear(a);
  block_tag::Read(a, &shard, &index);
  EXPECT_EQ(1023u, shard);
  __libc_free(a);
}

TEST(BlockTagTest, TheTagLiesPastTheProgramsBytesInAlignedBlocksToo) {
  for (size_t alignment : {size_t{16}, size_t{64}, size_t{4096}}) {
    for (size_t n : {size_t{0}, size_t{24}, size_t{100}, size_t{5000}}) {
      void* p = __libc_memalign(alignment, n + block_tag::kBytes);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(block_tag::Fits(p, n)) << alignment << " " << n;
      EXPECT_GE(reinterpret_cast<uintptr_t>(block_tag::Where(p)),
                reinterpret_cast<uintptr_t>(p) + n);
      __libc_free(p);
    }
  }
}

}  // namespace
}  // namespace heapgraph
