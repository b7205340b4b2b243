// tests/programs: the memory heapgraph's unwinder maps for itself (the rule walk's table,
// registered in heap/runtime/UnwinderMappings.h) is left out of a leak scan's roots, and nothing
// else is. For tests/scanner/UnwinderRootsTest. Linked with libheapgraph.so and the scanner.
// Usage: unwinder_roots threads N: N threads allocate and block; each keeps one 4,096-byte block
// referenced only from its stack. The main thread leaks 25 blocks of 4,242 bytes, and keeps
// blocks of 4,343 bytes referenced only from memory it mapped itself: with mmap() on the main
// thread, with mmap() on a worker thread (after its first allocation), and with syscall(SYS_mmap).
// After the check a fork() child allocates and reads every registered range (the scan's snapshot
// lacked them; a fork child must not): forked=1 if it exited 0.
// Runs scanner::RunLeakScan and prints one line:
//   ok=1 leaked=<4,242-byte leaks> kept_leaked=<4,096 or 4,343-byte blocks reported>
//   unwinder_ranges=<n> unwinder_bytes=<b> root_bytes=<b> forked=<0|1> [mapped=0]
// (exits 1 with ok=0 error=<...> when the scan failed, 64 on a bad argument).
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ProgramSupport.h"
#include "heap/plugin/RecorderEntries.h"
#include "heap/runtime/UnwinderMappings.h"
#include "scanner/LeakScan.h"

namespace {

constexpr size_t kLeakSize = 4242;
constexpr size_t kKeptSize = 4343;
constexpr size_t kStackKeptSize = 4096;
constexpr int kLeaks = 25;

void* volatile g_sink;
void** g_mapped[3];  // the program's own mappings, each holding one kept block's address

struct Range {
  uint64_t begin, end;
};

// The registry's published ranges, read under the recorder's snapshot (as a scan reads them).
std::vector<Range> UnwinderRanges() {
  auto begin = heapgraph::RecorderEntries::Get().begin_snapshot;
  auto end = heapgraph::RecorderEntries::Get().end_snapshot;
  Range found[256];
  size_t n = 0;
  HeapgraphRecorderView view = {};
  if (begin == nullptr || end == nullptr || begin(&view) != 0) return {};
  if (view.unwinder != nullptr) {
    view.unwinder->ForEach([&](uint64_t b, uint64_t e) {
      if (n < 256) found[n++] = {b, e};
    });
  }
  end();
  return std::vector<Range>(found, found + n);
}

void** MapWithLibc() {
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<void**>(p);
}

void** MapWithSyscall() {
  long p =
      syscall(SYS_mmap, nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p < 0 && p > -4096 ? nullptr : reinterpret_cast<void**>(p);
}

extern "C" __attribute__((noinline, used)) void KeepInMapping(void** mapping) {
  mapping[0] = malloc(kKeptSize);
  memset(mapping[0], 0x22, kKeptSize);
}

// After a check the registered ranges are copied into a fork() child again (the scan leaves them
// out of its snapshot only): the child allocates (heapgraph walks by the rule table) and reads
// every range. True if the child exited 0.
bool ForkChildUsesCaches(const std::vector<Range>& unwinder) {
  const pid_t pid = fork();
  if (pid == 0) {
    void* volatile p = malloc(kLeakSize);
    free(p);
    uint64_t sum = 0;
    for (const Range& r : unwinder) sum += *reinterpret_cast<const volatile uint8_t*>(r.begin);
    g_sink = reinterpret_cast<void*>(sum);
    _exit(0);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
int g_started = 0;
bool g_release = false;

void* Worker(void* arg) {
  void* volatile kept = malloc(kStackKeptSize);
  memset(kept, 0x33, kStackKeptSize);
  if (arg != nullptr) {
    g_mapped[1] = MapWithLibc();  // the program's own mmap, on a thread that allocated
    if (g_mapped[1] != nullptr) KeepInMapping(g_mapped[1]);
  }
  pthread_mutex_lock(&g_lock);
  ++g_started;
  pthread_cond_broadcast(&g_cond);
  while (!g_release) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  free(kept);
  return nullptr;
}

size_t CountSize(const heapgraph::scanner::ScanResult& r, size_t size) {
  size_t n = 0;
  for (const auto& b : r.leaked) n += b.size == size ? 1 : 0;
  return n;
}

int Report(const heapgraph::scanner::ScanResult& r, const std::vector<Range>& unwinder,
           const char* extra) {
  if (!r.ok) {
    std::printf("ok=0 error=%s\n", r.error.c_str());
    return 1;
  }
  uint64_t bytes = 0;
  for (const Range& u : unwinder) bytes += u.end - u.begin;
  std::printf(
      "ok=1 leaked=%zu kept_leaked=%zu unwinder_ranges=%zu unwinder_bytes=%llu "
      "root_bytes=%llu%s\n",
      CountSize(r, kLeakSize), CountSize(r, kKeptSize) + CountSize(r, kStackKeptSize),
      unwinder.size(), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(r.stats.root_bytes), extra);
  return 0;
}

void Release() {
  pthread_mutex_lock(&g_lock);
  g_release = true;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}

int Threads(int count) {
  std::vector<pthread_t> threads(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    pthread_create(&threads[static_cast<size_t>(i)], nullptr, Worker,
                   i == 0 ? &g_started : nullptr);
  }
  pthread_mutex_lock(&g_lock);
  while (g_started < count) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  g_mapped[0] = MapWithLibc();
  g_mapped[2] = MapWithSyscall();
  for (void** m : {g_mapped[0], g_mapped[2]}) {
    if (m != nullptr) KeepInMapping(m);
  }
  hgprog::LeakBlocks(kLeaks, kLeakSize);
  std::vector<Range> unwinder = UnwinderRanges();
  heapgraph::scanner::ScanResult result = heapgraph::scanner::RunLeakScan({});
  const bool forked = ForkChildUsesCaches(unwinder);
  Release();
  for (pthread_t t : threads) pthread_join(t, nullptr);
  bool mapped = g_mapped[0] != nullptr && g_mapped[1] != nullptr && g_mapped[2] != nullptr;
  return Report(result, unwinder,
                forked ? (mapped ? " forked=1" : " forked=1 mapped=0")
                       : (mapped ? " forked=0" : " forked=0 mapped=0"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "threads") == 0) return Threads(std::atoi(argv[2]));
  std::fprintf(stderr, "usage: unwinder_roots threads N\n");
  return 64;
}
