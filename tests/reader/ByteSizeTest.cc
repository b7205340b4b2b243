// tests/reader: ByteSize, the byte counts of the reports (spaced) and of the size categories
// (compact), each spelled as it was before the two were one function.
#include <gtest/gtest.h>

#include "reader/ByteSize.h"

namespace heapgraph {
namespace {

constexpr ByteSize::Style kCompact = ByteSize::Style::kCompact;

TEST(ByteSize, BytesBelowOneKiB) {
  EXPECT_EQ(ByteSize::Readable(0), "0 B");
  EXPECT_EQ(ByteSize::Readable(1023), "1023 B");
  EXPECT_EQ(ByteSize::Readable(0, kCompact), "0 B");
  EXPECT_EQ(ByteSize::Readable(48, kCompact), "48 B");
  EXPECT_EQ(ByteSize::Readable(1023, kCompact), "1023 B");
}

TEST(ByteSize, TwoDecimalsInTheLargestUnitReached) {
  EXPECT_EQ(ByteSize::Readable(1024), "1.00 KiB");
  EXPECT_EQ(ByteSize::Readable(1536), "1.50 KiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 20), "1.00 MiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 40), "1.00 TiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 50), "1.00 PiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 60), "1024.00 PiB");
  EXPECT_EQ(ByteSize::Readable(UINT64_MAX), "16384.00 PiB");
}

TEST(ByteSize, CompactHasNoSpaceBeforeTheUnitAndStopsAtTiB) {
  EXPECT_EQ(ByteSize::Readable(1024, kCompact), "1.00KiB");
  EXPECT_EQ(ByteSize::Readable(48 * 1024, kCompact), "48.00KiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{8} << 20, kCompact), "8.00MiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{3} << 29, kCompact), "1.50GiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 40, kCompact), "1.00TiB");
  EXPECT_EQ(ByteSize::Readable(uint64_t{1} << 50, kCompact), "1024.00TiB");
}

// Halves at the second decimal round to even on the exact binary value, as printf and fmt both
// did in the two functions this one replaced.
TEST(ByteSize, RoundingOfTheSecondDecimal) {
  EXPECT_EQ(ByteSize::Readable(1152), "1.12 KiB");  // 1.125 exactly
  EXPECT_EQ(ByteSize::Readable(1153), "1.13 KiB");
  EXPECT_EQ(ByteSize::Readable(1048575), "1024.00 KiB");  // 1023.999...: not yet a MiB
}

}  // namespace
}  // namespace heapgraph
