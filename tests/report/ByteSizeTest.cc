// tests/heap: ByteSize, the byte counts of `heapgraph dump` and the FOOM report's text.
#include <gtest/gtest.h>

#include "report/ByteSize.h"

namespace heapgraph {
namespace {

TEST(ByteSize, BytesBelowOneKiB) {
  EXPECT_EQ(ByteSize::Readable(0), "0 B");
  EXPECT_EQ(ByteSize::Readable(1023), "1023 B");
}

TEST(ByteSize, TwoDecimalsInTheLargestUnitReached) {
  EXPECT_EQ(ByteSize::Readable(1024), "1.00 KiB");
  EXPECT_EQ(ByteSize::Readable(1536), "1.50 KiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 20), "1.00 MiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 40), "1.00 TiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 50), "1.00 PiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 60), "1024.00 PiB");
}

}  // namespace
}  // namespace heapgraph
