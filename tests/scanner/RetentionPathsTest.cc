// tests/scanner: RetentionPaths on real memory of this process: a root range (an array standing
// for a global) reaches a chain of blocks; the path to the target group is the shortest one, with
// the word offsets that link it, and an unreachable group stays unreached.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "scanner/RetentionPaths.h"

namespace heapgraph::scanner {
namespace {

TEST(RetentionPathsTest, FindsTheShortestPathFromARoot) {
  // a -> b -> c (target); a -> c directly too at word 3; d (target of group 1) unreachable.
  auto* a = new uint64_t[4]{};
  auto* b = new uint64_t[2]{};
  auto* c = new uint64_t[2]{};
  auto* d = new uint64_t[2]{};
  a[1] = reinterpret_cast<uint64_t>(b);
  b[0] = reinterpret_cast<uint64_t>(c);
  a[3] = reinterpret_cast<uint64_t>(c);
  std::vector<BlockRange> ranges = {{reinterpret_cast<uint64_t>(a), 32},
                                    {reinterpret_cast<uint64_t>(b), 16},
                                    {reinterpret_cast<uint64_t>(c), 16},
                                    {reinterpret_cast<uint64_t>(d), 16}};
  std::sort(ranges.begin(), ranges.end(),
            [](const BlockRange& x, const BlockRange& y) { return x.begin < y.begin; });
  BlockIndex index(
      std::vector<BlockRange, MmapAllocator<BlockRange>>(ranges.begin(), ranges.end()));
  HeapMarker marker(index);
  auto block = [&](const void* p) { return index.FindStart(reinterpret_cast<uint64_t>(p)); };
  std::vector<uint32_t> group(index.size(), RetentionPaths::kNone);
  group[block(c)] = 0;
  group[block(d)] = 1;

  // The "global": a page of its own (a root range is a whole mapping, read word by word).
  auto* root = static_cast<uint64_t*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(root, MAP_FAILED);
  root[2] = reinterpret_cast<uint64_t>(a);
  // A RootRanges with one range over `root`: built from a fake map holding only it.
  roots::ProcessMappings mappings;
  char line[128];
  snprintf(line, sizeof(line), "%lx-%lx rw-p 00000000 00:00 0\n",
           static_cast<unsigned long>(reinterpret_cast<uint64_t>(root) & ~uint64_t{4095}),
           static_cast<unsigned long>((reinterpret_cast<uint64_t>(root) | 4095) + 1));
  mappings.ParseText(line);
  RootRanges roots;
  roots.Compute(mappings, {}, index, 0, {}, 0);
  ASSERT_FALSE(roots.ranges().empty());

  RetentionPaths paths(marker, index, group, 2);
  paths.Search(roots, {});
  ASSERT_EQ(paths.reached(0), block(c));
  EXPECT_EQ(paths.reached(1), RetentionPaths::kNone);
  // c was reached from a's word 3 directly (depth 1), not through b.
  EXPECT_EQ(paths.parent(block(c)), block(a));
  EXPECT_EQ(paths.offset(block(c)), 24u);
  EXPECT_EQ(paths.parent(block(a)), RetentionPaths::kNone);
  EXPECT_EQ(paths.root(block(a)).address, reinterpret_cast<uint64_t>(&root[2]));
  munmap(root, 4096);
  delete[] a;
  delete[] b;
  delete[] c;
  delete[] d;
}

}  // namespace
}  // namespace heapgraph::scanner
