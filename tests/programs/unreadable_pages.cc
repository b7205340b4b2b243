// tests/programs: a leak scan over memory that faults when read, for
// tests/scanner/UnreadablePagesProgramTest (issue 12, item 4). Linked with libheapgraph.so and the
// scanner. Four idle threads run beside the main thread; a fifth holds the only reference to the
// holder block (below) in its stack. Every mode leaks 7 blocks of 3,131 bytes and keeps one block
// of 5,151 bytes whose only reference lies right after the faulting memory, so it is found only if
// the scan goes on past it. Modes:
//   mmap_block   the holder is a 1 MiB malloc block (an mmap'd chunk) with an interior page
//                mprotect(PROT_NONE), which holds the only reference to a kept block of 6,161
//                bytes (the page's real contents must be scanned); a second such block, leaked,
//                has one too (1 MiB + 3 pages)
//   brk_block    the holder is a 64 KiB memalign'd block of the brk heap with an interior page
//                mprotect(PROT_NONE) holding the only reference to a 6,161-byte block
//   guard_block  mmap_block with MADV_GUARD_INSTALL guard pages instead (Linux 6.13+)
//   guard_root   a 1 MiB private anonymous mapping (a root: no block in it) whose page 4 and top
//                page are MADV_GUARD_INSTALL guard pages (maps still says rw-p); the reference
//                is in page 8
//   file_root    a 1 MiB private writable mapping of a file, truncated to 4 KiB afterwards (its
//                255 pages past the end raise SIGBUS); the reference is in page 0
// Prints one line:
//   ok=1 leaked=<3,131-byte leaks> kept_leaked=<5,151-byte blocks reported>
//   hidden_leaked=<6,161-byte blocks reported> big_leaked=<leaked 1 MiB + 3 pages blocks reported>
//   unreadable=<pages> (all on one line); with a second argument `in_place` the scan is asked to
//   run in place (ScanOptions::in_stopped_world) and scans twice, and the line goes on with
//   in_place=<0/1> fell_back=<0/1: the in-place helper ended on a fault> again_ok=<0/1>
//   again_in_place=<0/1> again_leaked=<3,131-byte leaks of the second scan>
// or "skip=<reason>" (exit 0) when the kernel lacks the feature, "ok=0 error=<...>" (exit 1) when
// the scan failed, and exits 64 on a bad argument.
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "scanner/LeakScan.h"
#include "tests/programs/ScanChildSupport.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kLeakSize = 3131;
constexpr size_t kKeptSize = 5151;
constexpr size_t kHiddenSize = 6161;
constexpr size_t kBigLeakSize = (1u << 20) + 3 * kPage;
constexpr int kLeaks = 7;
constexpr int kIdleThreads = 4;
constexpr int kMadvGuardInstall = 102;  // MADV_GUARD_INSTALL (Linux 6.13)

void* volatile g_sink;
char* volatile g_holder_for_thread;

using hgprog::CountSize;
using hgprog::PlantKept;
namespace ParkedThreads = hgprog::ParkedThreads;

// Keeps the holder in this thread's stack (and nowhere else) while the scan runs.
void* Holder(void*) {
  char* volatile holder = g_holder_for_thread;
  g_holder_for_thread = nullptr;
  ParkedThreads::Park();
  g_sink = holder;
  return nullptr;
}

char* FirstFullPage(void* block) {
  return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(block) + kPage - 1) & ~(kPage - 1));
}

// A private anonymous mapping of `bytes` between two PROT_NONE pages, so that the kernel never
// merges it with a neighbour (a mapping holding a block is heap, not a root).
char* IsolatedMapping(size_t bytes) {
  void* area = mmap(nullptr, bytes + 2 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return nullptr;
  char* inner = static_cast<char*>(area) + kPage;
  if (mprotect(inner, bytes, PROT_READ | PROT_WRITE) != 0) return nullptr;
  return inner;
}

// Makes the page at `page` unreadable; false with *skip set when the kernel cannot.
bool MakeUnreadable(char* page, bool guard, std::string* skip) {
  if (!guard) return mprotect(page, kPage, PROT_NONE) == 0;
  if (madvise(page, kPage, kMadvGuardInstall) == 0) return true;
  *skip = std::string("MADV_GUARD_INSTALL: ") + strerror(errno);
  return false;
}

// Returns the holder block (or nullptr with *skip or *error set).
char* Prepare(const std::string& mode, std::string* skip, std::string* error) {
  bool guard = mode == "guard_block";
  if (mode == "mmap_block" || guard) {
    auto* holder = static_cast<char*>(malloc(1u << 20));
    memset(holder, 0, 1u << 20);
    char* bad = FirstFullPage(holder) + kPage;
    PlantKept(bad + kPage + 64, kKeptSize);
    if (!guard) PlantKept(bad + 512, kHiddenSize);  // a guard would discard the page's contents
    auto* big = static_cast<char*>(malloc(kBigLeakSize));
    memset(big, 0, kBigLeakSize);
    if (!MakeUnreadable(bad, guard, skip) ||
        !MakeUnreadable(FirstFullPage(big) + kPage, guard, skip)) {
      if (skip->empty()) *error = std::string("mprotect: ") + strerror(errno);
      return nullptr;
    }
    g_sink = nullptr;
    return holder;
  }
  if (mode == "brk_block") {
    auto* holder = static_cast<char*>(memalign(kPage, 16 * kPage));  // below the mmap threshold
    memset(holder, 0, 16 * kPage);
    char* bad = holder + 4 * kPage;
    PlantKept(bad + kPage + 64, kKeptSize);
    PlantKept(bad + 512, kHiddenSize);
    if (!MakeUnreadable(bad, false, skip)) {
      *error = std::string("mprotect: ") + strerror(errno);
      return nullptr;
    }
    return holder;
  }
  if (mode == "guard_root") {
    char* root = IsolatedMapping(256 * kPage);
    if (root == nullptr) {
      *error = "mmap failed";
      return nullptr;
    }
    memset(root, 0, 256 * kPage);
    PlantKept(root + 8 * kPage + 64, kKeptSize);
    if (!MakeUnreadable(root + 4 * kPage, true, skip) ||
        !MakeUnreadable(root + 255 * kPage, true, skip)) {
      return nullptr;
    }
    return root;
  }
  if (mode == "file_root") {
    const char* tmp = getenv("TMPDIR");
    std::string path =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/heapgraph-unreadable-XXXXXX";
    int fd = mkstemp(path.data());
    if (fd < 0 || ftruncate(fd, 256 * kPage) != 0) {
      *error = std::string("temporary file: ") + strerror(errno);
      return nullptr;
    }
    void* mapped = mmap(nullptr, 256 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    unlink(path.c_str());
    if (mapped == MAP_FAILED) {
      *error = std::string("mmap: ") + strerror(errno);
      return nullptr;
    }
    auto* root = static_cast<char*>(mapped);
    PlantKept(root + 64, kKeptSize);
    if (ftruncate(fd, kPage) != 0) {  // pages 1..255 now lie past the end of the file
      *error = std::string("ftruncate: ") + strerror(errno);
      return nullptr;
    }
    close(fd);
    return root;
  }
  *error = "unknown mode";
  return nullptr;
}

int Run(const std::string& mode, bool in_place) {
  std::string skip, error;
  char* holder = Prepare(mode, &skip, &error);
  if (!skip.empty()) {
    std::printf("skip=%s\n", skip.c_str());
    return 0;
  }
  if (holder == nullptr) {
    std::printf("ok=0 error=%s\n", error.c_str());
    return error == "unknown mode" ? 64 : 1;
  }
  hgprog::LeakBlocks(kLeaks, kLeakSize);
  pthread_t threads[kIdleThreads + 1];
  g_holder_for_thread = holder;
  holder = nullptr;
  pthread_create(&threads[0], nullptr, Holder, nullptr);
  for (int i = 1; i <= kIdleThreads; ++i) {
    pthread_create(&threads[i], nullptr, ParkedThreads::Idle, nullptr);
  }
  ParkedThreads::AwaitParked(kIdleThreads + 1);
  heapgraph::scanner::ScanOptions options;
  options.in_stopped_world = in_place;
  heapgraph::scanner::ScanResult r = heapgraph::scanner::RunLeakScan(options);
  // In place, a faulting page ends the scan's helper task: scanned again with a snapshot process,
  // and so is the next scan (in place stays off in this process).
  const bool fell_back = r.notice.find("faulted while scanning in place") != std::string::npos;
  heapgraph::scanner::ScanResult again =
      in_place ? heapgraph::scanner::RunLeakScan(options) : heapgraph::scanner::ScanResult{};
  ParkedThreads::ReleaseAndJoin(threads);
  if (!r.ok) {
    std::printf("ok=0 error=%s\n", r.error.c_str());
    return 1;
  }
  std::printf("ok=1 leaked=%zu kept_leaked=%zu hidden_leaked=%zu big_leaked=%zu unreadable=%llu",
              CountSize(r, kLeakSize), CountSize(r, kKeptSize), CountSize(r, kHiddenSize),
              CountSize(r, kBigLeakSize),
              static_cast<unsigned long long>(r.stats.unreadable_pages));
  if (in_place) {
    std::printf(" in_place=%d fell_back=%d again_ok=%d again_in_place=%d again_leaked=%zu",
                r.stats.in_stopped_world ? 1 : 0, fell_back ? 1 : 0, again.ok ? 1 : 0,
                again.stats.in_stopped_world ? 1 : 0, CountSize(again, kLeakSize));
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "in_place")) {
    std::fprintf(stderr,
                 "usage: unreadable_pages mmap_block|brk_block|guard_block|guard_root|file_root "
                 "[in_place]\n");
    return 64;
  }
  return Run(argv[1], argc == 3);
}
