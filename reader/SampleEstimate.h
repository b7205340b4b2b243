// reader/: estimated true totals of a set of live blocks read from a recording, with
// their standard errors. In a full recording (mean 0) every block counts once and the error is 0.
// In a sampled one (heap.tree version 3) a block of size s was recorded with probability
// p = 1 - exp(-s / mean), independently of every other block (AllocationSampler), so the
// Horvitz-Thompson estimates
//   count = sum 1/p_i              bytes = sum s_i/p_i
// are unbiased, with unbiased variance estimates
//   var(count) = sum (1-p_i)/p_i^2  var(bytes) = sum (1-p_i) s_i^2/p_i^2
// over the sampled blocks i. For blocks much smaller than the mean (p ~ s/mean) both relative
// standard errors are about 1/sqrt(k) for k sampled blocks; blocks much larger than the mean are
// always sampled and add no error. docs/recording-format.md states the same.
#pragma once

#include <cstdint>

namespace heapgraph {

class SampleEstimate {
 public:
  SampleEstimate() = default;
  explicit SampleEstimate(uint64_t mean) : mean_(mean) {}

  // One recorded block of `size` bytes.
  void Add(uint64_t size);
  // Adds the blocks of another, independent estimate (its mean may differ).
  void Merge(const SampleEstimate& other);

  uint64_t mean() const { return mean_; }
  bool exact() const { return count_variance_ == 0 && bytes_variance_ == 0; }
  uint64_t samples() const { return samples_; }  // recorded blocks added
  double count() const { return count_; }
  double bytes() const { return bytes_; }
  double count_error() const;  // one standard error
  double bytes_error() const;

 private:
  uint64_t mean_ = 0;
  uint64_t samples_ = 0;
  double count_ = 0, bytes_ = 0;
  double count_variance_ = 0, bytes_variance_ = 0;
};

}  // namespace heapgraph
