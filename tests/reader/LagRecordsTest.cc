// reader/LagRecords on synthetic lag files: records read back, a torn record (short, bad check
// word: a kill in the middle of a write) stops reading and is flagged, the lag in progress at
// death, one-line errors for a file that is not a lag file.
#include <gtest/gtest.h>

#include "reader/LagRecords.h"
#include "reader/RecordingError.h"
#include "tests/reader/SyntheticLagFile.h"

namespace heapgraph {
namespace {

std::string Record(uint32_t kind, uint64_t unit, uint32_t stack) {
  return lagfile::LagRecordBytes(kind, unit, stack);
}

TEST(LagRecordsTest, RecordsAndTheLagInProgress) {
  LagRecords lag;
  lag.Parse(lagfile::LagHeaderBytes() + Record(format::kLagLong, 1, 5) +
            Record(format::kLagEnded, 1, 0) + Record(format::kLagLong, 2, 6) +
            Record(format::kLagLong, 2, 7));
  ASSERT_EQ(lag.records().size(), 4u);
  EXPECT_FALSE(lag.torn());
  ASSERT_NE(lag.InProgress(), nullptr);
  EXPECT_EQ(lag.InProgress()->stack, 7u);
}

TEST(LagRecordsTest, EndedLagIsNotInProgress) {
  LagRecords lag;
  lag.Parse(lagfile::LagHeaderBytes() + Record(format::kLagLong, 1, 5) +
            Record(format::kLagEnded, 1, 0));
  EXPECT_EQ(lag.InProgress(), nullptr);
}

TEST(LagRecordsTest, ShortLastRecordIsTorn) {
  LagRecords lag;
  std::string last = Record(format::kLagLong, 2, 6);
  lag.Parse(lagfile::LagHeaderBytes() + Record(format::kLagLong, 1, 5) + last.substr(0, 100));
  EXPECT_EQ(lag.records().size(), 1u);
  EXPECT_TRUE(lag.torn());
}

TEST(LagRecordsTest, WrongCheckWordIsTorn) {
  LagRecords lag;
  std::string bad = Record(format::kLagLong, 2, 6);
  bad[30] ^= 1;
  lag.Parse(lagfile::LagHeaderBytes() + Record(format::kLagLong, 1, 5) + bad);
  EXPECT_EQ(lag.records().size(), 1u);
  EXPECT_TRUE(lag.torn());
}

TEST(LagRecordsTest, NotALagFileIsOneError) {
  LagRecords lag;
  std::string h = lagfile::LagHeaderBytes();
  h[0] = 'X';
  EXPECT_THROW(lag.Parse(h), RecordingError);
  EXPECT_THROW(lag.Parse("short"), RecordingError);
}

TEST(LagRecordsTest, MissingFileIsAbsent) {
  LagRecords lag("/nonexistent-heapgraph-dir");
  EXPECT_FALSE(lag.present());
}

}  // namespace
}  // namespace heapgraph
