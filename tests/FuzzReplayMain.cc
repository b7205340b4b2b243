// tests/: the driver of a fuzz target's replay build (tests/CMakeLists.txt, heapgraph_add_fuzzer):
// the same harness and the same source list as the libFuzzer target, compiled by the project's
// compiler into a plain executable, with this main() instead of libFuzzer's. It feeds the
// harness a fixed series of pseudo-random inputs (the same every run: a failure reproduces) and
// every file named on the command line, so the README's test command links each fuzzer's source
// list (a missing source fails the build, as the libFuzzer targets' did unnoticed) and runs the
// readers over those inputs under ASan and UBSan.
//
// Usage: <name>_replay [--runs N] [--max-len BYTES] [FILE...]
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

uint64_t Next(uint64_t& state) {  // splitmix64
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Input `i`: its length log-uniform in [0, max_len] (short inputs often, long ones sometimes), its
// bytes random, with runs of zeros and 0xff in a third of them (lengths and counts at their
// extremes).
std::vector<uint8_t> Input(uint64_t i, size_t max_len) {
  uint64_t state = i * 0x2545F4914F6CDD1Dull + 1;
  // A bit width up to max_len's, then a length of that many random bits.
  const unsigned widest = static_cast<unsigned>(std::bit_width(max_len));
  const unsigned bits = static_cast<unsigned>(Next(state) % (widest + 1));
  const size_t length =
      std::min<size_t>(max_len, static_cast<size_t>(Next(state) & ((uint64_t{1} << bits) - 1)));
  std::vector<uint8_t> bytes(length);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(Next(state));
  if (i % 3 == 0 && length > 0) {
    for (int run = 0; run < 4; ++run) {
      const size_t at = Next(state) % length;
      const size_t n = std::min<size_t>(length - at, Next(state) % 16);
      std::memset(bytes.data() + at, run % 2 == 0 ? 0 : 0xff, n);
    }
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t runs = 2000;
  size_t max_len = 4096;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--max-len") == 0 && i + 1 < argc) {
      max_len = std::strtoull(argv[++i], nullptr, 10);
    } else {
      files.emplace_back(argv[i]);
    }
  }
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  for (uint64_t i = 0; i < runs; ++i) {
    const std::vector<uint8_t> bytes = Input(i, max_len);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("%llu inputs and %zu files replayed\n", static_cast<unsigned long long>(runs),
              files.size());
  return 0;
}
