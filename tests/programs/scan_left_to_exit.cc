// tests/programs: a leak scan or check with and without process_exits, for
// tests/scanner/LeakScanTest. Linked with libheapgraph.so and the check. It leaks 2 blocks and
// runs one scan (scanner::RunLeakScan, ScanOptions::process_exits) or one check
// (report::RunLeakCheck, LeakCheckOptions::process_exits), its first (as the at-exit check is),
// as its argument says: scan-exits, scan-unmaps, check-exits, check-unmaps. It prints the bytes
// of mappings the scan or check left behind (the sizes in /proc/self/maps, after it against
// before it) and the leaks it found:
//   ok=1 left=<bytes> leaked=<n>
// and exits 0 (1 with error=<...> when the scan failed).
#include <malloc.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

#include "ProgramSupport.h"
#include "check/LeakCheck.h"
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

// One scan or check; the bytes it left mapped, or INT64_MIN when it failed (printed).
int64_t Run(bool check, bool process_exits, size_t* leaked) {
  const int64_t before = MappedBytes();
  std::string error;
  if (check) {
    heapgraph::report::LeakCheckOptions options;
    options.process_exits = process_exits;
    heapgraph::report::LeakReport report = heapgraph::report::RunLeakCheck(options);
    if (!report.ok) error = report.error;
    *leaked = report.summary.direct_blocks + report.summary.indirect_blocks;
  } else {
    heapgraph::scanner::ScanOptions options;
    options.process_exits = process_exits;
    heapgraph::scanner::ScanResult result = heapgraph::scanner::RunLeakScan(options);
    if (!result.ok) error = result.error;
    *leaked = result.leaked.size();
  }
  const int64_t after = MappedBytes();
  if (!error.empty()) {
    std::printf("ok=0 error=%s\n", error.c_str());
    return INT64_MIN;
  }
  return after - before;
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena: a thread of the check (its symbol warm-up) that met the main arena locked
  // would map a 64 MiB arena of its own, or not, as timing goes.
  mallopt(M_ARENA_MAX, 1);
  hgprog::LeakBlocks(2, 144);
  size_t leaked = 0;
  const std::string mode = argc > 1 ? argv[1] : "";
  const int64_t left = Run(mode.rfind("check", 0) == 0, mode.ends_with("-exits"), &leaked);
  if (left == INT64_MIN) return 1;
  std::printf("ok=1 left=%" PRId64 " leaked=%zu\n", left, leaked);
  return 0;
}
