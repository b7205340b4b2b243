// tests/programs: a leak scan over a sparse reservation, for tests/scanner/SparseRootsTest
// (issue 12, item 10). Linked with libheapgraph.so and the scanner. The main thread maps a private
// anonymous MAP_NORESERVE area of <GiB> GiB (between two PROT_NONE pages, so that it merges with no
// neighbour and stays a root of its own) and writes into two of its pages only: at 1/3 of it the
// only reference to a kept block of 5,151 bytes, at its last page a zero. It leaks 7 blocks of
// 3,131 bytes, starts 3 idle threads and scans. Usage: sparse_roots <GiB> [checks]: the scan is
// repeated `checks` times (default 1). Prints one line per check:
//   ok=1 leaked=<3,131-byte leaks> kept_leaked=<5,151-byte blocks reported>
//   absent_pages=<n> root_bytes=<n> total_ms=<the check's time>   (all on one line)
// ("ok=0 error=<...>" and exit 1 when a scan failed; "skip=<reason>" and exit 0 when the area
// cannot be mapped; exit 64 on a bad argument).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "scanner/LeakScan.h"
#include "tests/programs/ScanChildSupport.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kLeakSize = 3131;
constexpr size_t kKeptSize = 5151;
constexpr int kLeaks = 7;
constexpr int kIdleThreads = 3;

using hgprog::CountSize;
namespace ParkedThreads = hgprog::ParkedThreads;

}  // namespace

int main(int argc, char** argv) {
  long gib = argc >= 2 ? strtol(argv[1], nullptr, 10) : 0;
  long checks = argc >= 3 ? strtol(argv[2], nullptr, 10) : 1;
  if (argc < 2 || argc > 3 || gib <= 0 || gib > 1024 || checks <= 0) {
    std::fprintf(stderr, "usage: sparse_roots <GiB> [checks]\n");
    return 64;
  }
  size_t bytes = static_cast<size_t>(gib) << 30;
  void* area = mmap(nullptr, bytes + 2 * kPage, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) {
    std::printf("skip=mmap of %ld GiB: %s\n", gib, strerror(errno));
    return 0;
  }
  char* root = static_cast<char*>(area) + kPage;
  if (mprotect(root, bytes, PROT_READ | PROT_WRITE) != 0) {
    std::printf("skip=mprotect of %ld GiB: %s\n", gib, strerror(errno));
    return 0;
  }
  hgprog::PlantKept(root + (bytes / 3 & ~(kPage - 1)) + 128, kKeptSize);
  root[bytes - 8] = 0;
  hgprog::LeakBlocks(kLeaks, kLeakSize);
  pthread_t threads[kIdleThreads];
  for (pthread_t& t : threads) pthread_create(&t, nullptr, ParkedThreads::Idle, nullptr);
  ParkedThreads::AwaitParked(kIdleThreads);
  int status = 0;
  for (long i = 0; i < checks && status == 0; ++i) {
    heapgraph::scanner::ScanResult r = heapgraph::scanner::RunLeakScan({});
    if (!r.ok) {
      std::printf("ok=0 error=%s\n", r.error.c_str());
      status = 1;
      break;
    }
    std::printf("ok=1 leaked=%zu kept_leaked=%zu absent_pages=%llu root_bytes=%llu total_ms=%.1f\n",
                CountSize(r, kLeakSize), CountSize(r, kKeptSize),
                static_cast<unsigned long long>(r.stats.absent_pages),
                static_cast<unsigned long long>(r.stats.root_bytes), r.timings.total_ms);
    std::fflush(stdout);
  }
  ParkedThreads::ReleaseAndJoin(threads);
  return status;
}
