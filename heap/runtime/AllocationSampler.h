// heap/runtime/: one thread's Poisson-by-bytes allocation sampler (as tcmalloc and jemalloc
// sample): sample points fall on the stream of allocated bytes as a Poisson process of rate 1/mean,
// and an allocation is sampled when a point falls inside its bytes, i.e. with probability 1 -
// exp(-size / mean), independently of every other allocation. Implemented as a countdown of bytes
// to the next point, drawn from an exponential distribution (xorshift64* + a natural log).
// Trivially constructible, no allocation: lives in initial-exec TLS. Includes libc only.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>

namespace heapgraph {

class AllocationSampler {
 public:
  static constexpr uint64_t kDefaultMean = 512 * 1024;
  static constexpr uint64_t kMaxMean = uint64_t{1} << 30;

  // The seed every new thread's generator derives from (with a per-thread counter).
  static void SetProcessSeed(uint64_t seed);

  // Seeds this sampler explicitly (tests); otherwise the first Sample() seeds it.
  void Seed(uint64_t seed);

  // True when an allocation of `size` bytes is sampled; `mean` > 0. The common, unsampled case is
  // one compare and one subtraction.
  bool Sample(uint64_t size, uint64_t mean) {
    if (bytes_until_sample_ > size) {
      bytes_until_sample_ -= size;
      return false;
    }
    return SampleSlow(size, mean);
  }

  // The next distance between sample points: exponential with the given mean, at least 1.
  uint64_t NextInterval(uint64_t mean);

  // `mean` as HEAPGRAPH_OPTIONS spells it ("512K", "1M", "3000"), NUL-terminated in `out`.
  static void FormatMean(uint64_t mean, char* out, size_t size);

  // The probability that an allocation of `size` bytes is sampled: 1 - exp(-size / mean); 1 when
  // mean is 0 (full recording). Computed without libm on x86-64, as NextInterval's log is:
  // libheapgraph_scan.so (the reader's estimates) then needs no libm either, which spared every
  // at-exit check loading it (≈ 0.1 ms of a small program's check).
  static double InclusionProbability(uint64_t size, uint64_t mean) {
    if (mean == 0) return 1.0;
    return OneMinusExpOfMinus(static_cast<double>(size) / static_cast<double>(mean));
  }

 private:
  // 1 - exp(-x), x >= 0, exact near 0 as -expm1(-x) is. On x86-64 with x87 instructions: F2XM1
  // computes 2^t - 1 for |t| <= 1, and further out 2^t = 2^(whole + fraction) by FRNDINT and
  // FSCALE.
  static double OneMinusExpOfMinus(double x) {
#if defined(__x86_64__)
    long double t = -static_cast<long double>(x);
    __asm__("fldl2e\n\tfmulp" : "+t"(t));  // t * log2(e)
    if (t >= -1.0L) {
      __asm__("f2xm1" : "+t"(t));
      return static_cast<double>(-t);
    }
    long double whole = t;
    __asm__("frndint" : "+t"(whole));
    long double power = t - whole;  // in [-0.5, 0.5]
    __asm__("f2xm1" : "+t"(power));
    power += 1.0L;
    __asm__("fscale" : "+t"(power) : "u"(whole));  // power * 2^whole
    return static_cast<double>(1.0L - power);
#else
    return -expm1(-x);
#endif
  }

  bool SampleSlow(uint64_t size, uint64_t mean);
  uint64_t NextRandom();

  // Invariant: 0 only before the first Sample() (then rng_ may be 0 too: not seeded yet).
  uint64_t bytes_until_sample_;
  uint64_t rng_;  // xorshift64* state, never 0 once seeded
};

}  // namespace heapgraph
