// tests/programs: scanner::RunLeakScan with and without ScanOptions::process_exits, for
// tests/scanner/LeakScanTest. Linked with libheapgraph.so and the scanner. It leaks 2 blocks and
// runs one scan, its first (as the at-exit check is), with process_exits when its argument is
// "exits", and prints the bytes of mappings the scan left behind (the sizes in /proc/self/maps,
// after the scan against before it) and the leaks it found:
//   ok=1 left=<bytes> leaked=<n>
// and exits 0 (1 with error=<...> when the scan failed).
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "ProgramSupport.h"
#include "scanner/LeakScan.h"

namespace {

// The total size of this process's mappings.
int64_t MappedBytes() {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return -1;
  int64_t total = 0;
  uint64_t begin = 0, end = 0;
  char line[512];
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64, &begin, &end) == 2) {
      total += static_cast<int64_t>(end - begin);
    }
  }
  std::fclose(maps);
  return total;
}

// One scan; the bytes it left mapped, or INT64_MIN when it failed (printed).
int64_t Scan(bool process_exits, size_t* leaked) {
  heapgraph::scanner::ScanOptions options;
  options.process_exits = process_exits;
  const int64_t before = MappedBytes();
  heapgraph::scanner::ScanResult result = heapgraph::scanner::RunLeakScan(options);
  const int64_t after = MappedBytes();
  if (!result.ok) {
    std::printf("ok=0 error=%s\n", result.error.c_str());
    return INT64_MIN;
  }
  *leaked = result.leaked.size();
  return after - before;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LeakBlocks(2, 144);
  size_t leaked = 0;
  const int64_t left = Scan(argc > 1 && std::strcmp(argv[1], "exits") == 0, &leaked);
  if (left == INT64_MIN) return 1;
  std::printf("ok=1 left=%" PRId64 " leaked=%zu\n", left, leaked);
  return 0;
}
