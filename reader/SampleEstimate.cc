#include "reader/SampleEstimate.h"

#include <cmath>

#include "heap/runtime/AllocationSampler.h"

namespace heapgraph {

void SampleEstimate::Add(uint64_t size) {
  ++samples_;
  double s = static_cast<double>(size);
  double p = AllocationSampler::InclusionProbability(size, mean_);
  if (p <= 0) p = 1;  // a size-0 block is never sampled; a file that has one counts it once
  double weight = 1 / p;
  double spread = (1 - p) * weight * weight;
  count_ += weight;
  bytes_ += s * weight;
  count_variance_ += spread;
  bytes_variance_ += spread * s * s;
}

void SampleEstimate::Merge(const SampleEstimate& other) {
  samples_ += other.samples_;
  count_ += other.count_;
  bytes_ += other.bytes_;
  count_variance_ += other.count_variance_;
  bytes_variance_ += other.bytes_variance_;
}

double SampleEstimate::count_error() const {
  return std::sqrt(count_variance_);
}

double SampleEstimate::bytes_error() const {
  return std::sqrt(bytes_variance_);
}

}  // namespace heapgraph
