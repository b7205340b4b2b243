// tests/heap: SampledAddressFilter: never a false "absent" for an added address, counts per
// bucket (two blocks hashing alike), and mostly "absent" for addresses never added.
#include <gtest/gtest.h>

#include <memory>

#include "heap/runtime/SampledAddressFilter.h"

namespace heapgraph {
namespace {

TEST(SampledAddressFilterTest, AddedAddressesAreAlwaysPossiblyPresent) {
  auto filter = std::make_unique<SampledAddressFilter>();
  for (uint64_t a = 0x10000; a < 0x10000 + 16 * 5000; a += 16) filter->Add(a);
  for (uint64_t a = 0x10000; a < 0x10000 + 16 * 5000; a += 16) EXPECT_TRUE(filter->MayContain(a));
  for (uint64_t a = 0x10000; a < 0x10000 + 16 * 5000; a += 16) filter->Remove(a);
  for (uint64_t a = 0x10000; a < 0x10000 + 16 * 5000; a += 16) EXPECT_FALSE(filter->MayContain(a));
}

TEST(SampledAddressFilterTest, CountsSoOneRemovalKeepsACollidingBlock) {
  auto filter = std::make_unique<SampledAddressFilter>();
  filter->Add(0x5000);
  filter->Add(0x5000);  // the same bucket twice (a colliding block, or a re-insert)
  filter->Remove(0x5000);
  EXPECT_TRUE(filter->MayContain(0x5000));
  filter->Remove(0x5000);
  EXPECT_FALSE(filter->MayContain(0x5000));
}

TEST(SampledAddressFilterTest, MostUnaddedAddressesAreRuledOut) {
  auto filter = std::make_unique<SampledAddressFilter>();
  for (uint64_t i = 0; i < 2000; ++i) filter->Add(0x7f0000000000 + i * 4096 * 3);
  int maybe = 0;
  for (uint64_t a = 0x550000000000; a < 0x550000000000 + 16 * 100000; a += 16) {
    maybe += filter->MayContain(a) ? 1 : 0;
  }
  EXPECT_LT(maybe, 100000 * 6 / 100) << "2000 of 65536 buckets used: ~3 % false positives";
}

}  // namespace
}  // namespace heapgraph
