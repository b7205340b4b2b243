// tests/programs: the recorder's per-thread state (its guards and fallback stack-cache entry, one
// static-TLS object published as HeapgraphRecorderView::thread_state_*) and its threads' stack
// caches (a region of their own, published with the unwinder's mappings) are left out of a leak
// scan's roots, and the program's own thread-locals are not. For
// tests/scanner/RecorderTlsRootsTest. Linked with libheapgraph.so and the scanner. Mode:
//   threads N   N threads allocate and free heavily from varied stacks (filling the recorder's
//               stack cache), then each keeps one 4,545-byte block referenced only from its own
//               __thread variable, plants the address of one 4,646-byte block in its own
//               recorder state (the hash of its fallback stack-cache entry, the state's last
//               word pair) and of one 4,747-byte block in an entry of the stack caches' region
//               (a scan must treat both as heapgraph's: the blocks are leaked), then scrubs the
//               copies of those addresses left in dead frames and vector registers. The main
//               thread does the same and leaks 25 blocks of 4,242 bytes. Then all block and the
//               program scans.
// Prints one line:
//   ok=1 leaked=<4,242-byte leaks> kept_leaked=<4,545-byte blocks reported>
//   planted_leaked=<4,646-byte blocks reported> planted=<threads planted> state_bytes=<size>
//   root_bytes=<b> cache_planted_leaked=<4,747-byte blocks reported> cache_planted=<threads>
//   (all on one line)
// (exits 1 with ok=0 error=<...> when the scan failed, 64 on a bad argument).
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ProgramSupport.h"
#include "heap/platform/StaticTlsArea.h"
#include "heap/plugin/RecorderEntries.h"
#include "heap/runtime/StackCachePool.h"
#include "heap/runtime/UnwinderMappings.h"
#include "scanner/LeakScan.h"

namespace {

constexpr size_t kLeakSize = 4242;
constexpr size_t kKeptSize = 4545;
constexpr size_t kPlantedSize = 4646;
constexpr size_t kCachePlantedSize = 4747;
constexpr int kLeaks = 25;
constexpr uint64_t kEntryBytes = sizeof(heapgraph::StackCachePool::Entry);
constexpr uint64_t kCacheRegionBytes =
    heapgraph::StackCachePool::kSlots * heapgraph::StackCachePool::kEntries * kEntryBytes;

__thread void* volatile t_kept __attribute__((tls_model("initial-exec")));
void* volatile g_sink;
std::atomic<int> g_planted{0};
std::atomic<int> g_cache_planted{0};
uint64_t g_cache_region_end = 0;  // the stack caches' region, as the recorder published it

// The recorder's per-thread state, read under its snapshot (as a scan reads it).
heapgraph::StaticTlsArea RecorderState() {
  auto begin = heapgraph::RecorderEntries::Get().begin_snapshot;
  auto end = heapgraph::RecorderEntries::Get().end_snapshot;
  HeapgraphRecorderView view = {};
  if (begin == nullptr || end == nullptr || begin(&view) != 0) return {};
  view.unwinder->ForEach([](uint64_t b, uint64_t e) {
    if (e - b == kCacheRegionBytes) g_cache_region_end = e;
  });
  end();
  return {view.thread_state_offset, view.thread_state_size};
}

heapgraph::StaticTlsArea g_state;

// Distinct stacks: one per depth.
extern "C" __attribute__((noinline, used)) void Churn(int depth, int rounds) {
  if (depth > 0) {
    Churn(depth - 1, rounds);
    asm volatile("" ::: "memory");  // no tail call: every depth is its own stack
    return;
  }
  for (int i = 0; i < rounds; ++i) {
    void* p = malloc(16 + static_cast<size_t>(i % 64) * 8);
    g_sink = p;
    free(p);
  }
}

extern "C" __attribute__((noinline, used)) void KeepInTls() {
  t_kept = malloc(kKeptSize);
  memset(t_kept, 0x33, kKeptSize);
}

// The block's address goes into the hash word of the fallback stack-cache entry, and nowhere else.
extern "C" __attribute__((noinline, used)) void PlantInRecorderState() {
  if (g_state.size() < kEntryBytes) return;
  void* p = malloc(kPlantedSize);
  memset(p, 0x44, kPlantedSize);
  uint64_t slot =
      g_state.BeginIn(heapgraph::StaticTlsArea::ThreadPointer()) + g_state.size() - kEntryBytes;
  *reinterpret_cast<void* volatile*>(slot) = p;
  g_planted.fetch_add(1);
}

// Another block's address goes into an entry near the end of the stack caches' region (a cache no
// thread of this program takes: 33 threads take the first ones), one entry per thread.
extern "C" __attribute__((noinline, used)) void PlantInStackCaches() {
  if (g_cache_region_end == 0) return;
  void* p = malloc(kCachePlantedSize);
  memset(p, 0x55, kCachePlantedSize);
  const int n = g_cache_planted.fetch_add(1);
  uint64_t entry = g_cache_region_end - static_cast<uint64_t>(n + 1) * kEntryBytes;
  *reinterpret_cast<void* volatile*>(entry) = p;
}

// Where the planted address may linger after its functions returned, and a conservative scan
// would find it: the dead frames below the caller (malloc and the recorder's hook saw it; the
// frames of a later blocking call leave holes over them) and the vector registers (the hook's
// compiled code moves address pairs through them; a blocked thread's registers are roots).
extern "C" __attribute__((noinline, used)) void Scrub() {
  char buffer[32 << 10];
  memset(buffer, 0, sizeof(buffer));
  asm volatile("" : : "r"(buffer) : "memory");
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx")) {
    asm volatile("vzeroall");
  } else {
    asm volatile(
        "pxor %%xmm0, %%xmm0\n pxor %%xmm1, %%xmm1\n pxor %%xmm2, %%xmm2\n"
        "pxor %%xmm3, %%xmm3\n pxor %%xmm4, %%xmm4\n pxor %%xmm5, %%xmm5\n"
        "pxor %%xmm6, %%xmm6\n pxor %%xmm7, %%xmm7\n pxor %%xmm8, %%xmm8\n"
        "pxor %%xmm9, %%xmm9\n pxor %%xmm10, %%xmm10\n pxor %%xmm11, %%xmm11\n"
        "pxor %%xmm12, %%xmm12\n pxor %%xmm13, %%xmm13\n pxor %%xmm14, %%xmm14\n"
        "pxor %%xmm15, %%xmm15" ::
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
              "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  }
#elif defined(__aarch64__)
  asm volatile(
      "movi v0.16b, #0\n movi v1.16b, #0\n movi v2.16b, #0\n movi v3.16b, #0\n"
      "movi v4.16b, #0\n movi v5.16b, #0\n movi v6.16b, #0\n movi v7.16b, #0\n"
      "movi v16.16b, #0\n movi v17.16b, #0\n movi v18.16b, #0\n movi v19.16b, #0\n"
      "movi v20.16b, #0\n movi v21.16b, #0\n movi v22.16b, #0\n movi v23.16b, #0\n"
      "movi v24.16b, #0\n movi v25.16b, #0\n movi v26.16b, #0\n movi v27.16b, #0\n"
      "movi v28.16b, #0\n movi v29.16b, #0\n movi v30.16b, #0\n movi v31.16b, #0" ::
          : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20",
            "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");
#endif
}

void Prepare() {
  for (int depth = 0; depth < 24; ++depth) Churn(depth, 200);
  g_sink = nullptr;
  KeepInTls();
  PlantInRecorderState();
  PlantInStackCaches();
  Scrub();
}

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
int g_started = 0;
bool g_release = false;

void* Worker(void*) {
  Prepare();
  pthread_mutex_lock(&g_lock);
  ++g_started;
  pthread_cond_broadcast(&g_cond);
  while (!g_release) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  return nullptr;
}

size_t CountSize(const heapgraph::scanner::ScanResult& r, size_t size) {
  size_t n = 0;
  for (const auto& b : r.leaked) n += b.size == size ? 1 : 0;
  return n;
}

int Threads(int count) {
  g_state = RecorderState();
  std::vector<pthread_t> threads(static_cast<size_t>(count));
  for (pthread_t& t : threads) pthread_create(&t, nullptr, Worker, nullptr);
  pthread_mutex_lock(&g_lock);
  while (g_started < count) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  Prepare();
  hgprog::LeakBlocks(kLeaks, kLeakSize);
  heapgraph::scanner::ScanResult r = heapgraph::scanner::RunLeakScan({});
  pthread_mutex_lock(&g_lock);
  g_release = true;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  if (!r.ok) {
    std::printf("ok=0 error=%s\n", r.error.c_str());
    return 1;
  }
  std::printf(
      "ok=1 leaked=%zu kept_leaked=%zu planted_leaked=%zu planted=%d state_bytes=%llu "
      "root_bytes=%llu cache_planted_leaked=%zu cache_planted=%d\n",
      CountSize(r, kLeakSize), CountSize(r, kKeptSize), CountSize(r, kPlantedSize),
      g_planted.load(), static_cast<unsigned long long>(g_state.size()),
      static_cast<unsigned long long>(r.stats.root_bytes), CountSize(r, kCachePlantedSize),
      g_cache_planted.load());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "threads") == 0) return Threads(std::atoi(argv[2]));
  std::fprintf(stderr, "usage: recorder_tls_roots threads N\n");
  return 64;
}
