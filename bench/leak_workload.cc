// bench/: the program heapgraph's leak check is compared with LeakSanitizer's on
// (docs/performance.md, "Leak scan"). One source, four builds:
//
//   leak_workload_heapgraph  g++ -O2, linked with libheapgraph.so and libheapgraph_scan.so; the
//                            check is heapgraph_check_leaks() (JSON + text report to files).
//   leak_workload_phases     the same, but the check is re-run step by step from heapgraph's
//                            internal libraries with a timer around each step (leak_phases.cc).
//   leak_workload_lsan       clang++ -O2 -fsanitize=leak, nothing of heapgraph; the check is
//                            __lsan_do_recoverable_leak_check() with LSan's report sent to a file.
//   leak_workload_plain      g++ -O2, nothing of either tool: with --at-exit, the heap for a tool
//                            that checks at exit (`heapgraph run`, liblsan.so preloaded), or none
//                            (bench/run_at_exit_comparison.sh).
//
// Modes (each builds a heap, then runs exactly one check and prints one RESULT line):
//   bigheap N      N blocks of 64 B, each holding 8 pointers to random reachable blocks (the first
//                  one threads a random chain through all of them, so every one is reachable from
//                  g_roots); every 100th block is leaked (nothing points to it): N/100 leaks.
//   manyleaks N S  N leaked blocks of 32 B from S distinct call stacks (a table of 16 noinline
//                  functions combined to depth ceil(log16 S)), plus a small reachable heap.
//   threads T      T idle threads blocked in FUTEX_WAIT, each holding a block only its stack
//                  references, plus a small heap: 10,000 reachable blocks and 100 leaked.
//
// Usage: leak_workload --heapgraph|--phases|--lsan|--plain MODE ARGS... [--out DIR] [--no-probe]
//                      [--child-mem] [--alloc-probe] [--at-exit] [--seed S]
//   --out DIR     where reports go (heapgraph.json/.txt, lsan.txt); default $TMPDIR or /tmp
//   --no-probe    no probe thread (see below)
//   --child-mem   sample the heapgraph snapshot child's private memory every 2 ms
//   --alloc-probe a thread that, every 0.2 ms, makes 16 malloc+free pairs and times them (below)
//   --at-exit     no check call: the RESULT line (setup only), then exit(0), so that the at-exit
//                 check of the tool around the program runs (the only mode of --plain)
//
// The RESULT line (key=value, one line on stdout):
//   check_ms       wall time of the check call (heapgraph: scan + graph + report + files; LSan:
//                  stop, mark, collect, resume, symbolize and print)
//   cpu_ms         user+system CPU of the process and its waited children during the call
//   stopped_ms     heapgraph: its own world_stopped_ms (lock to release); LSan: -1 (not exposed)
//   probe_gap_ms   largest interval between two wake-ups of a thread that sleeps 1 ms in a loop,
//                  during the check: an outside view of how long threads were stopped (it also
//                  includes scheduler latency: probe_base_ms is the same over 100 ms before)
//   extra_kb       VmHWM after the check minus VmRSS before (the peak is reset through
//                  /proc/self/clear_refs first): the check's extra peak memory in this process
//   child_maxrss_kb  heapgraph: ru_maxrss of the snapshot child (RUSAGE_CHILDREN): its RSS includes
//                  every page it shares with the parent, so it is an upper bound, not extra memory
//   child_private_kb heapgraph with --child-mem: the child's peak Private_Dirty + Private_Clean
//                  (smaps_rollup): the memory it allocated or copied on write
//   leaks          leaked blocks reported (direct + indirect); expected: what the workload leaked
//   alloc_iter_ms  with --alloc-probe: the longest iteration (0.2 ms sleep + 16 malloc+free pairs)
//                  that ended during the check: the stall an allocating thread felt, stop,
//                  lock waits and scheduling included; alloc_iter_base_ms the same over the
//                  100 ms before. alloc_call_ms / alloc_call_base_ms: the 16 pairs alone
//   heapgraph's JSON report's scan: pause_ms (allocation_pause_ms) and alloc_wait_ms
//                  (longest_allocation_wait_ms, timed by the waiting threads themselves)
//
// Environment: LEAKBENCH_PRINT_WINDOW=1 also prints "WINDOW start,end" (CLOCK_MONOTONIC seconds of
// the check, for `perf record -k CLOCK_MONOTONIC` + `perf report --time start,end`);
// LEAKBENCH_DEBUG_MAPS=1 prints /proc/self/maps before the check; LEAKBENCH_DEBUG_SAMPLER=1
// prints every --child-mem sample. leak_phases.cc adds LEAKBENCH_SCAN_ONLY,
// LEAKBENCH_RECORD_CHECK_ALLOCS, LEAKBENCH_CHECK_JSON.
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(LEAKBENCH_LSAN)
#include <sanitizer/lsan_interface.h>
#elif defined(LEAKBENCH_PLAIN)
// No tool: --at-exit only.
#elif defined(LEAKBENCH_PHASES)
// leak_phases.cc defines leakbench::RunPhasedCheck and PhaseTimes, then includes this file.
#else
#include "heapgraph/heapgraph.h"
#endif

namespace {

#if defined(LEAKBENCH_LSAN)
constexpr const char* kTool = "lsan";
#elif defined(LEAKBENCH_PLAIN)
constexpr const char* kTool = "plain";
#elif defined(LEAKBENCH_PHASES)
constexpr const char* kTool = "phases";
#else
constexpr const char* kTool = "heapgraph";
#endif

// ---- Small helpers (no allocation on the probe and sampler threads). ---------------------------

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double CpuMs(int who) {
  rusage u;
  getrusage(who, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

// Reads a whole small /proc file into `buffer` (NUL-terminated); false on failure.
bool ReadSmallFile(const char* path, char* buffer, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t used = 0;
  for (;;) {
    ssize_t n = read(fd, buffer + used, size - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
    if (used == size - 1) break;
  }
  close(fd);
  buffer[used] = '\0';
  return used > 0;
}

// The kB value of "Key:   123 kB" in a /proc status-like text; -1 if absent.
long FieldKb(const char* text, const char* key) {
  const char* p = strstr(text, key);
  if (p == nullptr) return -1;
  p += strlen(key);
  while (*p == ' ' || *p == '\t' || *p == ':') ++p;
  return strtol(p, nullptr, 10);
}

long StatusKb(const char* key) {
  char text[8192];
  if (!ReadSmallFile("/proc/self/status", text, sizeof(text))) return -1;
  return FieldKb(text, key);
}

// Resets VmHWM to the current RSS (Linux >= 4.0).
bool ResetPeakRss() {
  int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, "5", 1) == 1;
  close(fd);
  return ok;
}

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// Anonymous memory that is neither a heap block nor (once unmapped) a root.
template <typename T>
T* MapArray(size_t n) {
  void* p =
      mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    _exit(2);
  }
  return static_cast<T*>(p);
}
template <typename T>
void UnmapArray(T* p, size_t n) {
  munmap(p, n * sizeof(T));
}

// Keeps the compiler from dropping an allocation whose pointer the program then forgets.
inline void Escape(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

// Overwrites the stack below the caller's frame, where the builders' dead frames still hold block
// addresses (neither tool scans below the stack pointer, but the check's own frames land there).
__attribute__((noinline)) void ScrubStack() {
  char area[256 * 1024];
  memset(area, 0, sizeof(area));
  asm volatile("" : : "r"(area) : "memory");
}

// ---- The roots. -------------------------------------------------------------------------------

constexpr size_t kRoots = 1024;
void* g_roots[kRoots];                  // .bss: a data-segment root for both tools
void* volatile g_small_heap = nullptr;  // head of the small reachable list

// ---- bigheap ----------------------------------------------------------------------------------

struct Built {
  uint64_t blocks = 0;
  uint64_t expected_leaks = 0;
};

__attribute__((noinline)) void* AllocateBigHeapBlock() {
  return malloc(64);
}

__attribute__((noinline)) Built BuildBigHeap(uint64_t n, uint64_t seed) {
  Rng rng{seed | 1};
  void** all = MapArray<void*>(n);
  for (uint64_t i = 0; i < n; ++i) all[i] = AllocateBigHeapBlock();
  uint64_t leaked = n / 100;
  uint64_t live = n - leaked;
  // Live blocks: every index but i % 100 == 99 (for n < 100 nothing leaks).
  void** reach = MapArray<void*>(live);
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (i % 100 != 99) reach[k++] = all[i];
  }
  // A random order, so that the chain (word 0) visits the heap randomly.
  for (uint64_t i = live - 1; i > 0; --i) {
    uint64_t j = rng.Next() % (i + 1);
    void* t = reach[i];
    reach[i] = reach[j];
    reach[j] = t;
  }
  for (uint64_t i = 0; i < live; ++i) {
    auto* words = static_cast<void**>(reach[i]);
    words[0] = i + 1 < live ? reach[i + 1] : nullptr;
    for (int w = 1; w < 8; ++w) words[w] = reach[rng.Next() % live];
  }
  for (uint64_t i = 99; i < n; i += 100) {
    auto* words = static_cast<void**>(all[i]);
    for (int w = 0; w < 8; ++w) words[w] = reach[rng.Next() % live];
  }
  for (size_t r = 0; r < kRoots && live > 0; ++r) g_roots[r] = reach[r * live / kRoots];
  UnmapArray(all, n);
  UnmapArray(reach, live);
  return {n, leaked};
}

// ---- manyleaks --------------------------------------------------------------------------------

constexpr int kFanout = 16;
using LevelFn = void* (*)(const uint8_t* digits, int remaining);
extern LevelFn g_levels[kFanout];

// Level<K> is one frame of a synthetic stack: with `remaining` levels left it calls
// g_levels[digits[0]], else it allocates. Every digit string gives a distinct return-address chain.
template <int K>
__attribute__((noinline)) void* Level(const uint8_t* digits, int remaining) {
  void* p;
  if (remaining == 0) {
    p = malloc(32 + 0 * K);
    memset(p, 0, 32);
  } else {
    p = g_levels[digits[0]](digits + 1, remaining - 1);
  }
  Escape(p);  // also keeps the call from becoming a tail call (the frame must stay)
  return p;
}

LevelFn g_levels[kFanout] = {Level<0>,  Level<1>,  Level<2>,  Level<3>, Level<4>,  Level<5>,
                             Level<6>,  Level<7>,  Level<8>,  Level<9>, Level<10>, Level<11>,
                             Level<12>, Level<13>, Level<14>, Level<15>};

__attribute__((noinline)) Built BuildSmallHeap(uint64_t live, uint64_t leaked) {
  void* head = nullptr;
  for (uint64_t i = 0; i < live; ++i) {
    auto* node = static_cast<void**>(malloc(48));
    memset(node, 0, 48);
    node[0] = head;
    head = node;
  }
  g_small_heap = head;
  for (uint64_t i = 0; i < leaked; ++i) {
    void* p = malloc(48);
    memset(p, 0, 48);
    Escape(p);
  }
  return {live + leaked, leaked};
}

__attribute__((noinline)) Built BuildManyLeaks(uint64_t n, uint64_t stacks) {
  int depth = 1;
  for (uint64_t reach = kFanout; reach < stacks; reach *= kFanout) ++depth;
  uint8_t digits[16] = {};
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t s = i % stacks;
    for (int d = depth - 1; d >= 0; --d) {
      digits[d] = static_cast<uint8_t>(s % kFanout);
      s /= kFanout;
    }
    // One extra level: the leaf frame allocates, so depth+1 synthetic frames in all.
    Escape(g_levels[digits[0]](digits + 1, depth));
  }
  Built small = BuildSmallHeap(1000, 0);
  return {n + small.blocks, n};
}

// ---- threads ----------------------------------------------------------------------------------

std::atomic<uint32_t> g_release{0};  // futex word the idle threads wait on
std::atomic<uint64_t> g_started{0};

void* IdleThread(void*) {
  // Reachable only through this stack slot while the thread waits.
  void* volatile held = malloc(48);
  memset(held, 0, 48);
  g_started.fetch_add(1);
  while (g_release.load() == 0) {
    syscall(SYS_futex, &g_release, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
  }
  free(held);
  return nullptr;
}

__attribute__((noinline)) Built StartThreads(uint64_t count) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (uint64_t i = 0; i < count; ++i) {
    pthread_t t;
    int e = pthread_create(&t, &attr, IdleThread, nullptr);
    if (e != 0) {
      fprintf(stderr, "pthread_create #%" PRIu64 ": %s\n", i, strerror(e));
      _exit(2);
    }
    pthread_detach(t);
  }
  pthread_attr_destroy(&attr);
  while (g_started.load() < count) usleep(1000);
  Built small = BuildSmallHeap(10000, 100);
  return {count + small.blocks, small.expected_leaks};
}

// ---- Probe and child-memory sampler (no allocation). ------------------------------------------

struct Probe {
  std::atomic<int> phase{0};  // 0 baseline, 1 during the check, 2 stop
  std::atomic<int64_t> base_gap_us{0};
  std::atomic<int64_t> check_gap_us{0};
};
Probe g_probe;

void* ProbeMain(void*) {
  double last = NowMs();
  for (;;) {
    timespec one_ms{0, 1000000};
    nanosleep(&one_ms, nullptr);
    double now = NowMs();
    int phase = g_probe.phase.load();
    if (phase == 2) break;
    auto gap = static_cast<int64_t>((now - last) * 1000);
    auto& slot = phase == 0 ? g_probe.base_gap_us : g_probe.check_gap_us;
    if (gap > slot.load()) slot.store(gap);
    last = now;
  }
  return nullptr;
}

// The pause an allocating thread feels (--alloc-probe): like a server answering a request every
// 0.2 ms with a few allocations. Max iteration and call times, in µs, before and during the check
// (the phase is g_probe's).
struct AllocProbe {
  std::atomic<int64_t> base_iteration_us{0}, check_iteration_us{0};
  std::atomic<int64_t> base_call_us{0}, check_call_us{0};
};
AllocProbe g_alloc_probe;
void* volatile g_alloc_sink;

void KeepLonger(std::atomic<int64_t>& slot, double ms) {
  auto us = static_cast<int64_t>(ms * 1000);
  if (us > slot.load()) slot.store(us);
}

void* AllocProbeMain(void*) {
  for (;;) {
    double begin = NowMs();
    timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
    double called = NowMs();
    for (int i = 0; i < 16; ++i) {
      void* p = malloc(64 + 16 * static_cast<size_t>(i));
      g_alloc_sink = p;
      free(p);
    }
    double end = NowMs();
    int phase = g_probe.phase.load();
    if (phase == 2) break;
    KeepLonger(phase == 0 ? g_alloc_probe.base_iteration_us : g_alloc_probe.check_iteration_us,
               end - begin);
    KeepLonger(phase == 0 ? g_alloc_probe.base_call_us : g_alloc_probe.check_call_us, end - called);
  }
  return nullptr;
}

struct ChildSampler {
  std::atomic<bool> stop{false};
  std::atomic<long> peak_private_kb{-1};
  pid_t main_tid = 0;
  bool debug = false;  // LEAKBENCH_DEBUG_SAMPLER: every sample on stderr
};
ChildSampler g_sampler;

void* SamplerMain(void*) {
  char path[64], text[4096];
  snprintf(path, sizeof(path), "/proc/self/task/%d/children", g_sampler.main_tid);
  while (!g_sampler.stop.load()) {
    char children[1024];
    if (ReadSmallFile(path, children, sizeof(children))) {
      // Every child of the checking thread: the snapshot process, but also the ptrace helper
      // while the world is stopped, which shares our memory (skipped: kcmp says same mm).
      char* p = children;
      for (;;) {
        char* end = nullptr;
        long child = strtol(p, &end, 10);
        if (end == p || child <= 0) break;
        p = end;
        long order = syscall(SYS_kcmp, getpid(), child, KCMP_VM, 0, 0);
        if (order != 1 && order != 2) continue;  // same address space (0) or unknown (-1)
        char rollup[64];
        snprintf(rollup, sizeof(rollup), "/proc/%ld/smaps_rollup", child);
        if (!ReadSmallFile(rollup, text, sizeof(text))) continue;
        long dirty = FieldKb(text, "Private_Dirty"), clean = FieldKb(text, "Private_Clean");
        if (g_sampler.debug) {
          char line[160];
          int n = snprintf(line, sizeof(line), "sampler: pid %ld rss %ld private %ld+%ld kB\n",
                           child, FieldKb(text, "Rss"), dirty, clean);
          (void)!write(2, line, static_cast<size_t>(n));
        }
        if (dirty >= 0 && clean >= 0 && dirty + clean > g_sampler.peak_private_kb.load()) {
          g_sampler.peak_private_kb.store(dirty + clean);
        }
      }
    }
    timespec two_ms{0, 2000000};
    nanosleep(&two_ms, nullptr);
  }
  return nullptr;
}

// ---- The checks. ------------------------------------------------------------------------------

struct CheckResult {
  bool ok = false;
  int64_t leaks = -1;
  int64_t direct = -1, indirect = -1;
  int64_t records = -1;  // leak records (stack groups) in the report
  double stopped_ms = -1;
  double scan_ms = -1;  // heapgraph: the scan alone (summary.total_ms)
  std::string extra;    // more key=value pairs
};

#if defined(LEAKBENCH_LSAN)

// Counts LSan's "Direct leak of B byte(s) in N object(s)" lines.
void ParseLsanReport(const std::string& path, CheckResult* r) {
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return;
  char line[4096];
  r->direct = r->indirect = r->records = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long bytes = 0, objects = 0;
    if (sscanf(line, "Direct leak of %llu byte(s) in %llu object(s)", &bytes, &objects) == 2) {
      r->direct += static_cast<int64_t>(objects);
      ++r->records;
    } else if (sscanf(line, "Indirect leak of %llu byte(s) in %llu object(s)", &bytes, &objects) ==
               2) {
      r->indirect += static_cast<int64_t>(objects);
      ++r->records;
    }
  }
  fclose(f);
  r->leaks = r->direct + r->indirect;
}

__attribute__((noinline)) CheckResult RunCheck(const std::string& out_dir) {
  CheckResult r;
  std::string path = out_dir + "/lsan.txt";
  int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int saved = dup(2);
  dup2(file, 2);
  close(file);
  int leaked = __lsan_do_recoverable_leak_check();
  dup2(saved, 2);
  close(saved);
  r.ok = true;
  r.extra = "lsan_returned=" + std::to_string(leaked);
  ParseLsanReport(path, &r);
  return r;
}

#elif defined(LEAKBENCH_PHASES)

__attribute__((noinline)) CheckResult RunCheck(const std::string& out_dir) {
  CheckResult r;
  leakbench::PhaseTimes t;
  std::string error;
  r.ok = leakbench::RunPhasedCheck(out_dir + "/heapgraph.json", out_dir + "/heapgraph.txt", &t,
                                   &error);
  if (!r.ok) {
    fprintf(stderr, "phased check failed: %s\n", error.c_str());
    return r;
  }
  r.direct = static_cast<int64_t>(t.direct);
  r.indirect = static_cast<int64_t>(t.indirect);
  r.leaks = r.direct + r.indirect;
  r.records = static_cast<int64_t>(t.records);
  r.stopped_ms = t.world_stopped_ms;
  r.scan_ms = t.scan_ms;
  r.extra = t.Describe();
  return r;
}

#elif defined(LEAKBENCH_PLAIN)

CheckResult RunCheck(const std::string&) {
  fprintf(stderr, "the plain build has no check: use --at-exit\n");
  _exit(2);
}

#else

// The number after "key": in the JSON report `path` (the first one), or -1.
double JsonNumber(const std::string& path, const char* key) {
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return -1;
  std::string text;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) text.append(chunk, n);
  fclose(f);
  size_t at = text.find("\"" + std::string(key) + "\":");
  return at == std::string::npos ? -1 : strtod(text.c_str() + at + strlen(key) + 3, nullptr);
}

__attribute__((noinline)) CheckResult RunCheck(const std::string& out_dir) {
  CheckResult r;
  heapgraph_leak_summary s;
  std::string json = out_dir + "/heapgraph.json", text = out_dir + "/heapgraph.txt";
  int n = heapgraph_check_leaks(json.c_str(), text.c_str(), &s);
  r.ok = n >= 0 && s.ok;
  if (!r.ok) {
    fprintf(stderr, "heapgraph_check_leaks failed: %s\n", s.error);
    return r;
  }
  r.direct = static_cast<int64_t>(s.direct_blocks);
  r.indirect = static_cast<int64_t>(s.indirect_blocks);
  r.leaks = n;
  r.stopped_ms = s.world_stopped_ms;
  r.scan_ms = s.total_ms;
  char waits[96];
  snprintf(waits, sizeof(waits), " pause_ms=%.3f alloc_wait_ms=%.3f",
           JsonNumber(json, "allocation_pause_ms"), JsonNumber(json, "longest_allocation_wait_ms"));
  r.extra = "live_blocks=" + std::to_string(s.live_blocks) + " cycles=" + std::to_string(s.cycles) +
            waits;
  return r;
}

#endif

[[noreturn]] void Usage() {
  fprintf(stderr,
          "usage: leak_workload --heapgraph|--phases|--lsan|--plain (bigheap N | manyleaks N S | "
          "threads T) [--out DIR] [--no-probe] [--child-mem] [--alloc-probe] [--at-exit] "
          "[--seed S]\n");
  _exit(2);
}

uint64_t ParseCount(const char* s) {
  char* end = nullptr;
  double v = strtod(s, &end);
  if (end != nullptr && (*end == 'k' || *end == 'K')) v *= 1e3;
  if (end != nullptr && (*end == 'm' || *end == 'M')) v *= 1e6;
  if (v < 1) Usage();
  return static_cast<uint64_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  std::string tool_flag, mode, out_dir;
  std::vector<uint64_t> args;
  bool probe = true, child_mem = false, alloc_probe = false, at_exit = false;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  const char* tmp = getenv("TMPDIR");
  out_dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--heapgraph" || a == "--lsan" || a == "--phases" || a == "--plain") {
      tool_flag = a.substr(2);
    } else if (a == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (a == "--seed" && i + 1 < argc) {
      seed = strtoull(argv[++i], nullptr, 0);
    } else if (a == "--no-probe") {
      probe = false;
    } else if (a == "--child-mem") {
      child_mem = true;
    } else if (a == "--alloc-probe") {
      alloc_probe = true;
    } else if (a == "--at-exit") {
      at_exit = true;
    } else if (mode.empty() && a[0] != '-') {
      mode = a;
    } else if (!mode.empty() && a[0] != '-') {
      args.push_back(ParseCount(argv[i]));
    } else {
      Usage();
    }
  }
  if (tool_flag != kTool) {
    fprintf(stderr, "this binary was built for --%s, not --%s\n", kTool,
            tool_flag.empty() ? "?" : tool_flag.c_str());
    return 2;
  }

  double setup_start = NowMs();
  Built built;
  std::string params;
  if (mode == "bigheap" && args.size() == 1) {
    built = BuildBigHeap(args[0], seed);
    params = "n=" + std::to_string(args[0]);
  } else if (mode == "manyleaks" && args.size() == 2) {
    built = BuildManyLeaks(args[0], args[1]);
    params = "n=" + std::to_string(args[0]) + " stacks=" + std::to_string(args[1]);
  } else if (mode == "threads" && args.size() == 1) {
    built = StartThreads(args[0]);
    params = "threads=" + std::to_string(args[0]);
  } else {
    Usage();
  }
  double setup_ms = NowMs() - setup_start;
  if (at_exit) {
    printf("RESULT tool=%s mode=%s %s at_exit=1 expected=%" PRIu64 " setup_ms=%.0f\n", kTool,
           mode.c_str(), params.c_str(), built.expected_leaks, setup_ms);
    fflush(stdout);
    exit(0);  // the tool around the program checks now, after the static destructors
  }

  pthread_t probe_thread{}, sampler_thread{}, alloc_probe_thread{};
  if (alloc_probe) pthread_create(&alloc_probe_thread, nullptr, AllocProbeMain, nullptr);
  if (probe) pthread_create(&probe_thread, nullptr, ProbeMain, nullptr);
  if (probe || alloc_probe) {
    usleep(100 * 1000);  // baseline: scheduler latency of a 1 ms sleeper on this machine now
  }
  if (child_mem && std::string(kTool) != "lsan") {
    g_sampler.main_tid = static_cast<pid_t>(syscall(SYS_gettid));
    g_sampler.debug = getenv("LEAKBENCH_DEBUG_SAMPLER") != nullptr;
    pthread_create(&sampler_thread, nullptr, SamplerMain, nullptr);
  }

  if (getenv("LEAKBENCH_DEBUG_MAPS") != nullptr) {
    char line[512];
    FILE* maps = fopen("/proc/self/maps", "r");
    fprintf(stderr, "g_roots=%p g_roots[0]=%p\n", static_cast<void*>(g_roots), g_roots[0]);
    while (maps != nullptr && fgets(line, sizeof(line), maps) != nullptr) fputs(line, stderr);
    if (maps != nullptr) fclose(maps);
  }
  ScrubStack();
  bool hwm_reset = ResetPeakRss();
  long rss_before = StatusKb("VmRSS");
  double cpu_before = CpuMs(RUSAGE_SELF) + CpuMs(RUSAGE_CHILDREN);
  g_probe.phase.store(1);
  double start = NowMs();
  CheckResult r = RunCheck(out_dir);
  double check_ms = NowMs() - start;
  g_probe.phase.store(2);
  double cpu_ms = CpuMs(RUSAGE_SELF) + CpuMs(RUSAGE_CHILDREN) - cpu_before;
  long hwm_after = StatusKb("VmHWM");
  rusage children;
  getrusage(RUSAGE_CHILDREN, &children);
  if (probe) pthread_join(probe_thread, nullptr);
  if (alloc_probe) pthread_join(alloc_probe_thread, nullptr);
  if (child_mem && std::string(kTool) != "lsan") {
    g_sampler.stop.store(true);
    pthread_join(sampler_thread, nullptr);
  }

  double load1 = -1;
  {
    char text[256];
    if (ReadSmallFile("/proc/loadavg", text, sizeof(text))) load1 = strtod(text, nullptr);
  }
  printf("RESULT tool=%s mode=%s %s ok=%d expected=%" PRIu64 " leaks=%" PRId64 " direct=%" PRId64
         " indirect=%" PRId64 " records=%" PRId64
         " check_ms=%.2f cpu_ms=%.1f stopped_ms=%.3f scan_ms=%.2f probe_gap_ms=%.2f"
         " probe_base_ms=%.2f setup_ms=%.0f rss_before_kb=%ld extra_kb=%ld hwm_reset=%d"
         " child_maxrss_kb=%ld child_private_kb=%ld alloc_iter_ms=%.2f alloc_iter_base_ms=%.2f"
         " alloc_call_ms=%.2f alloc_call_base_ms=%.2f load1=%.2f %s\n",
         kTool, mode.c_str(), params.c_str(), r.ok ? 1 : 0, built.expected_leaks, r.leaks, r.direct,
         r.indirect, r.records, check_ms, cpu_ms, r.stopped_ms, r.scan_ms,
         probe ? g_probe.check_gap_us.load() / 1e3 : -1.0,
         probe ? g_probe.base_gap_us.load() / 1e3 : -1.0, setup_ms, rss_before,
         hwm_reset ? hwm_after - rss_before : -1, hwm_reset ? 1 : 0,
         std::string(kTool) == "lsan" ? -1L : children.ru_maxrss, g_sampler.peak_private_kb.load(),
         alloc_probe ? g_alloc_probe.check_iteration_us.load() / 1e3 : -1.0,
         alloc_probe ? g_alloc_probe.base_iteration_us.load() / 1e3 : -1.0,
         alloc_probe ? g_alloc_probe.check_call_us.load() / 1e3 : -1.0,
         alloc_probe ? g_alloc_probe.base_call_us.load() / 1e3 : -1.0, load1, r.extra.c_str());
  // For `perf record -k CLOCK_MONOTONIC` + `perf report --time START,END`: the check's window.
  if (getenv("LEAKBENCH_PRINT_WINDOW") != nullptr) {
    printf("WINDOW %.6f,%.6f\n", start / 1e3, (start + check_ms) / 1e3);
  }
  fflush(stdout);
  // No exit-time work: LSan's at-exit check, static destructors and 4,000 joins would only add
  // noise to what the script measures next.
  _exit(r.ok ? 0 : 1);
}
