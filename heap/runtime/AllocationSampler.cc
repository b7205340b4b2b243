#include "heap/runtime/AllocationSampler.h"

#include <math.h>
#include <stdio.h>

#include <atomic>

namespace heapgraph {
namespace {

std::atomic<uint64_t> g_process_seed{0x2545F4914F6CDD1Dull};
std::atomic<uint64_t> g_threads{0};

// ln(u), u > 0. On x86-64 the x87 FYL2X instruction (ln 2 · log2 u, in extended precision), so
// that libheapgraph.so needs nothing of libm: loading libm at the start of a recorded C program
// (a shell, /bin/true, make) cost ≈ 0.07 ms, and this was its only use (docs/performance.md,
// session 20). Elsewhere libm's log.
double NaturalLog(double u) {
#if defined(__x86_64__)
  long double x = u;
  __asm__("fldln2\n\tfxch\n\tfyl2x" : "+t"(x) : : "st(1)");
  return static_cast<double>(x);
#else
  return log(u);
#endif
}

uint64_t SplitMix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

void AllocationSampler::SetProcessSeed(uint64_t seed) {
  g_process_seed.store(seed, std::memory_order_relaxed);
  g_threads.store(0, std::memory_order_relaxed);
}

void AllocationSampler::Seed(uint64_t seed) {
  rng_ = SplitMix(seed);
  if (rng_ == 0) rng_ = 1;
}

uint64_t AllocationSampler::NextRandom() {
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1Dull;
}

uint64_t AllocationSampler::NextInterval(uint64_t mean) {
  // u in (0, 1]: 53 random bits, never 0, so -log(u) is finite and >= 0.
  double u = static_cast<double>((NextRandom() >> 11) + 1) * 0x1.0p-53;
  double interval = -NaturalLog(u) * static_cast<double>(mean);
  // Capped far beyond any mean (kMaxMean x 2^20): the tail past it has probability e^-(2^20).
  constexpr double kCap = 1.0e15;
  if (interval > kCap) interval = kCap;
  uint64_t bytes = static_cast<uint64_t>(interval);
  return bytes == 0 ? 1 : bytes;
}

bool AllocationSampler::SampleSlow(uint64_t size, uint64_t mean) {
  if (bytes_until_sample_ == 0) {  // this thread's first allocation: start the process
    if (rng_ == 0) {
      uint64_t n = g_threads.fetch_add(1, std::memory_order_relaxed);
      Seed(g_process_seed.load(std::memory_order_relaxed) + n * 0xD1B54A32D192ED03ull);
    }
    bytes_until_sample_ = NextInterval(mean);
    if (bytes_until_sample_ > size) {
      bytes_until_sample_ -= size;
      return false;
    }
  }
  // A point falls inside this allocation. By memorylessness the next point is an exponential
  // distance past its end, whatever else fell inside it.
  bytes_until_sample_ = NextInterval(mean);
  return true;
}

void AllocationSampler::FormatMean(uint64_t mean, char* out, size_t size) {
  const char* unit = "";
  if (mean != 0 && mean % (uint64_t{1} << 20) == 0) {
    mean >>= 20;
    unit = "M";
  } else if (mean != 0 && mean % 1024 == 0) {
    mean >>= 10;
    unit = "K";
  }
  snprintf(out, size, "%llu%s", static_cast<unsigned long long>(mean), unit);
}

}  // namespace heapgraph
