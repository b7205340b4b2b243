// tests/heap: AllocationSampler's statistics with deterministic seeds: exponential intervals with
// the configured mean, inclusion probability 1 - exp(-size/mean), and (with SampleEstimate)
// unbiased estimated totals whose stated standard error matches the spread over many draws.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heap/runtime/AllocationSampler.h"
#include "reader/SampleEstimate.h"

namespace heapgraph {
namespace {

constexpr uint64_t kMean = AllocationSampler::kDefaultMean;

TEST(AllocationSamplerTest, IntervalsAreExponentialWithTheMean) {
  AllocationSampler sampler{};
  sampler.Seed(42);
  constexpr int kDraws = 200000;
  double sum = 0, sum_squares = 0;
  for (int i = 0; i < kDraws; ++i) {
    double x = static_cast<double>(sampler.NextInterval(kMean));
    sum += x;
    sum_squares += x * x;
  }
  double mean = sum / kDraws;
  double variance = sum_squares / kDraws - mean * mean;
  // Exponential: standard deviation = mean; the sample mean's standard error is mean/sqrt(n).
  EXPECT_NEAR(mean, kMean, 4 * kMean / std::sqrt(kDraws));
  EXPECT_NEAR(std::sqrt(variance) / kMean, 1.0, 0.02);
}

TEST(AllocationSamplerTest, SizeIsSampledWithTheInclusionProbability) {
  for (uint64_t size : {uint64_t{64}, uint64_t{4096}, uint64_t{256} << 10, uint64_t{1} << 20}) {
    AllocationSampler sampler{};
    sampler.Seed(size);
    constexpr int kAllocations = 400000;
    int sampled = 0;
    for (int i = 0; i < kAllocations; ++i) sampled += sampler.Sample(size, kMean) ? 1 : 0;
    double p = AllocationSampler::InclusionProbability(size, kMean);
    double expected = p * kAllocations;
    double sigma = std::sqrt(kAllocations * p * (1 - p));
    EXPECT_NEAR(sampled, expected, 4 * sigma + 1) << "size " << size;
  }
}

// The probability is 1 - exp(-size / mean) to the last bits, as libm's -expm1 gives it, from
// sizes far below the mean (where 1 - exp would lose every digit) to sizes far above it.
TEST(AllocationSamplerTest, InclusionProbabilityIsMinusExpm1ToDoublePrecision) {
  const uint64_t means[] = {1, 3000, 512 * 1024, uint64_t{1} << 30};
  for (uint64_t mean : means) {
    for (uint64_t size = 1; size < (uint64_t{1} << 50); size = size * 3 + 1) {
      const double x = static_cast<double>(size) / static_cast<double>(mean);
      const double expected = -std::expm1(-x);
      EXPECT_NEAR(AllocationSampler::InclusionProbability(size, mean), expected, 4e-16 * expected)
          << "size " << size << " mean " << mean;
    }
  }
}

TEST(AllocationSamplerTest, ZeroBytesAreNeverSampledAndHugeBlocksAlways) {
  AllocationSampler sampler{};
  sampler.Seed(1);
  for (int i = 0; i < 100000; ++i) EXPECT_FALSE(sampler.Sample(0, 16));
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(sampler.Sample(uint64_t{1} << 40, kMean));
  EXPECT_EQ(AllocationSampler::InclusionProbability(5, 0), 1.0) << "mean 0 is full recording";
}

TEST(AllocationSamplerTest, UnseededSamplersDrawDifferentStreamsPerThread) {
  AllocationSampler::SetProcessSeed(99);
  AllocationSampler a{}, b{};
  std::vector<bool> first, second;
  for (int i = 0; i < 20000; ++i) {
    first.push_back(a.Sample(4096, 65536));
    second.push_back(b.Sample(4096, 65536));
  }
  EXPECT_NE(first, second);
  AllocationSampler::SetProcessSeed(99);  // the same process seed replays the same streams
  AllocationSampler c{};
  std::vector<bool> replay;
  for (int i = 0; i < 20000; ++i) replay.push_back(c.Sample(4096, 65536));
  EXPECT_EQ(first, replay);
}

// One draw: a heap of 100,000 x 64 B, 200 x 1 MiB and 2,000 blocks of 1..64 KiB (log-uniform),
// sampled with `seed`; returns the estimate from the sampled blocks.
SampleEstimate OneDraw(uint64_t seed, const std::vector<uint64_t>& sizes) {
  AllocationSampler sampler{};
  sampler.Seed(seed);
  SampleEstimate estimate(kMean);
  for (uint64_t size : sizes) {
    if (sampler.Sample(size, kMean)) estimate.Add(size);
  }
  return estimate;
}

TEST(AllocationSamplerTest, EstimatesAreUnbiasedAndTheStatedErrorMatchesTheSpread) {
  std::vector<uint64_t> sizes;
  sizes.insert(sizes.end(), 100000, 64);
  sizes.insert(sizes.end(), 200, uint64_t{1} << 20);
  uint64_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    sizes.push_back(uint64_t{1024} << ((x >> 33) % 7));
  }
  double true_count = static_cast<double>(sizes.size()), true_bytes = 0;
  for (uint64_t s : sizes) true_bytes += static_cast<double>(s);

  constexpr int kDraws = 300;
  double count_sum = 0, bytes_sum = 0, count_sq = 0, bytes_sq = 0, stated_bytes_error = 0;
  int bytes_within_two = 0;
  for (int d = 0; d < kDraws; ++d) {
    SampleEstimate e = OneDraw(1000 + d, sizes);
    count_sum += e.count();
    bytes_sum += e.bytes();
    count_sq += (e.count() - true_count) * (e.count() - true_count);
    bytes_sq += (e.bytes() - true_bytes) * (e.bytes() - true_bytes);
    stated_bytes_error += e.bytes_error();
    if (std::fabs(e.bytes() - true_bytes) <= 2 * e.bytes_error()) ++bytes_within_two;
  }
  double count_sd = std::sqrt(count_sq / kDraws), bytes_sd = std::sqrt(bytes_sq / kDraws);
  // Unbiased: the mean over draws is within 4 standard errors of the mean of the truth.
  EXPECT_NEAR(count_sum / kDraws, true_count, 4 * count_sd / std::sqrt(kDraws));
  EXPECT_NEAR(bytes_sum / kDraws, true_bytes, 4 * bytes_sd / std::sqrt(kDraws));
  // The stated error is the real spread (within 15 %), and ~95 % of draws are within 2 of it.
  EXPECT_NEAR(stated_bytes_error / kDraws / bytes_sd, 1.0, 0.15);
  EXPECT_GE(bytes_within_two, kDraws * 90 / 100);
}

TEST(AllocationSamplerTest, FormatMeanSpellsTheOption) {
  char text[32];
  AllocationSampler::FormatMean(512 * 1024, text, sizeof(text));
  EXPECT_STREQ(text, "512K");
  AllocationSampler::FormatMean(2 << 20, text, sizeof(text));
  EXPECT_STREQ(text, "2M");
  AllocationSampler::FormatMean(3000, text, sizeof(text));
  EXPECT_STREQ(text, "3000");
}

}  // namespace
}  // namespace heapgraph
