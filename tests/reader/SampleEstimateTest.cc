// tests/heap: SampleEstimate's Horvitz-Thompson estimates and standard errors, against the
// closed forms documented in docs/recording-format.md.
#include <gtest/gtest.h>

#include <cmath>

#include "reader/SampleEstimate.h"

namespace heapgraph {
namespace {

TEST(SampleEstimateTest, FullRecordingIsExact) {
  SampleEstimate e(0);
  e.Add(64);
  e.Add(1000);
  EXPECT_EQ(e.count(), 2.0);
  EXPECT_EQ(e.bytes(), 1064.0);
  EXPECT_EQ(e.count_error(), 0.0);
  EXPECT_EQ(e.bytes_error(), 0.0);
  EXPECT_TRUE(e.exact());
  EXPECT_EQ(e.samples(), 2u);
}

TEST(SampleEstimateTest, OneBlockWeighsTheInverseOfItsProbability) {
  const uint64_t mean = 1 << 19, size = 1 << 18;
  double p = 1 - std::exp(-0.5);
  SampleEstimate e(mean);
  e.Add(size);
  EXPECT_NEAR(e.count(), 1 / p, 1e-12);
  EXPECT_NEAR(e.bytes(), size / p, 1e-6);
  EXPECT_NEAR(e.count_error(), std::sqrt(1 - p) / p, 1e-12);
  EXPECT_NEAR(e.bytes_error(), size * std::sqrt(1 - p) / p, 1e-6);
  EXPECT_FALSE(e.exact());
}

TEST(SampleEstimateTest, SmallBlocksHaveRelativeErrorOneOverRootK) {
  const uint64_t mean = 1 << 19;
  SampleEstimate e(mean);
  for (int i = 0; i < 400; ++i) e.Add(64);
  EXPECT_NEAR(e.count_error() / e.count(), 1 / std::sqrt(400.0), 1e-3);
  EXPECT_NEAR(e.bytes_error() / e.bytes(), 1 / std::sqrt(400.0), 1e-3);
  EXPECT_NEAR(e.bytes() / 400, mean, mean * 1e-3) << "a small sampled block stands for ~mean bytes";
}

TEST(SampleEstimateTest, MergeAddsTotalsAndVariances) {
  SampleEstimate a(1 << 19), b(0);
  a.Add(64);
  b.Add(100);
  SampleEstimate merged = a;
  merged.Merge(b);
  EXPECT_DOUBLE_EQ(merged.count(), a.count() + 1);
  EXPECT_DOUBLE_EQ(merged.bytes(), a.bytes() + 100);
  EXPECT_DOUBLE_EQ(merged.bytes_error(), a.bytes_error());
  EXPECT_EQ(merged.samples(), 2u);
}

TEST(SampleEstimateTest, ASizeZeroBlockInAFileCountsOnce) {
  SampleEstimate e(1 << 19);
  e.Add(0);
  EXPECT_EQ(e.count(), 1.0);
  EXPECT_TRUE(std::isfinite(e.count_error()));
}

}  // namespace
}  // namespace heapgraph
