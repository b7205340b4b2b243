// bench/: repeated on-demand leak checks while other threads churn (issue 13 item 7; the run and
// its table: bench/run_repeated_checks.sh, docs/performance.md "Repeated checks while threads
// churn"). Nothing of heapgraph is linked: the checks are LeakSanitizer's
// __lsan_do_recoverable_leak_check(), bound weakly, so one source builds twice:
//
//   repeated_checks       g++ -O2; run with libheapgraph.so preloaded (its LSan interface,
//                         heap/runtime/LsanInterface.cc)
//   repeated_checks_lsan  clang++ -O2 -fsanitize=leak -DREPEATED_CHECKS_LSAN (LSan's runtime)
//
// N churning threads (default 10) each keep a working set of W live blocks (default 4000) and
// replace a random one in a loop (free, then malloc of 16..4096 bytes, first and last words
// written). The main thread first measures the churn rate alone for --baseline-ms, then makes K
// recoverable checks (default 100) back to back, then stops the churners. `--leaks L` leaks L
// blocks of 48 bytes before the checks (default 0: every check is clean).
//
// Usage: repeated_checks [--threads N] [--checks K] [--working-set W] [--leaks L]
//                        [--baseline-ms MS] [--verbose]
// Prints one line per check with --verbose ("CHECK i ms"), then one RESULT line (key=value):
//   total_s          the process's wall time from main() to the end (threads started and joined)
//   checks_s         wall time of the K checks
//   check_med_ms, check_min_ms, check_max_ms   one check's wall time
//   cpu_s            user+system CPU of the whole process and its waited children at the end
//   churn_base_kops  churn operations (a free + a malloc) per second, all threads, before the
//   checks churn_kops       the same during the checks: what the checks cost the other threads
//   last_result      the last check's return (0: no leak, 1: leaks)
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#if defined(REPEATED_CHECKS_LSAN)
#include <sanitizer/lsan_interface.h>
constexpr const char* kTool = "lsan";
#else
// libheapgraph.so's LSan interface when preloaded; absent otherwise (the checks are then skipped).
extern "C" int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
constexpr const char* kTool = "heapgraph";
#endif

namespace {

std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_ops{0};
std::atomic<int> g_filled{0};  // churners whose working set is allocated
void* volatile g_leak_sink = nullptr;

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double CpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u;
    getrusage(who, &u);
    total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

uint64_t Next(uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

void* NewBlock(uint64_t& rng) {
  size_t size = 16 + Next(rng) % (4096 - 16 + 1);
  auto* words = static_cast<uint64_t*>(malloc(size));
  words[0] = size;
  words[size / sizeof(uint64_t) - 1] = size;
  return words;
}

// The working set lives in a heap array reachable from the thread's stack: nothing leaks.
void Churn(size_t working_set, uint64_t seed) {
  uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
  std::vector<void*> live(working_set);
  for (void*& p : live) p = NewBlock(rng);
  g_filled.fetch_add(1);
  uint64_t ops = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    void*& slot = live[Next(rng) % working_set];
    free(slot);
    slot = NewBlock(rng);
    if (++ops % 256 == 0) g_ops.fetch_add(256, std::memory_order_relaxed);
  }
  for (void* p : live) free(p);
}

__attribute__((noinline)) void Leak(int count) {
  for (int i = 0; i < count; ++i) {
    g_leak_sink = malloc(48);
  }
  g_leak_sink = nullptr;
}

int Check() {
#if !defined(REPEATED_CHECKS_LSAN)
  if (__lsan_do_recoverable_leak_check == nullptr) return -1;
#endif
  return __lsan_do_recoverable_leak_check();
}

}  // namespace

int main(int argc, char** argv) {
  const double start = Now();
  int threads = 10, checks = 100, leaks = 0, baseline_ms = 500;
  size_t working_set = 4000;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    auto value = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (!std::strcmp(argv[i], "--threads"))
      threads = value();
    else if (!std::strcmp(argv[i], "--checks"))
      checks = value();
    else if (!std::strcmp(argv[i], "--working-set"))
      working_set = static_cast<size_t>(value());
    else if (!std::strcmp(argv[i], "--leaks"))
      leaks = value();
    else if (!std::strcmp(argv[i], "--baseline-ms"))
      baseline_ms = value();
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--threads N] [--checks K] [--working-set W] [--leaks L] "
                   "[--baseline-ms MS] [--verbose]\n",
                   argv[0]);
      return 2;
    }
  }
  if (threads < 0 || checks < 1 || working_set < 1) return 2;
  Leak(leaks);
  std::vector<std::thread> churners;
  for (int t = 0; t < threads; ++t) churners.emplace_back(Churn, working_set, t + 1);
  // The working sets are filled before the baseline starts.
  while (g_filled.load() < threads) usleep(1000);
  uint64_t ops0 = g_ops.load();
  double t0 = Now();
  usleep(static_cast<useconds_t>(baseline_ms) * 1000);
  uint64_t ops1 = g_ops.load();
  double t1 = Now();
  std::vector<double> times;
  int result = 0;
  for (int k = 0; k < checks; ++k) {
    double before = Now();
    result = Check();
    times.push_back((Now() - before) * 1e3);
    if (verbose) std::printf("CHECK %d %.1f\n", k + 1, times.back());
    if (result < 0) {
      std::fprintf(stderr, "no __lsan_do_recoverable_leak_check (preload libheapgraph.so)\n");
      return 1;
    }
  }
  uint64_t ops2 = g_ops.load();
  double t2 = Now();
  g_stop = true;
  for (std::thread& t : churners) t.join();
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  if (sorted.size() % 2 == 0) median = (median + sorted[sorted.size() / 2 - 1]) / 2;
  double load = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  std::printf(
      "RESULT tool=%s threads=%d checks=%d working_set=%zu leaks=%d total_s=%.3f checks_s=%.3f "
      "check_med_ms=%.1f check_min_ms=%.1f check_max_ms=%.1f cpu_s=%.3f churn_base_kops=%.0f "
      "churn_kops=%.0f last_result=%d load1=%.2f\n",
      kTool, threads, checks, working_set, leaks, Now() - start, t2 - t1, median, sorted.front(),
      sorted.back(), CpuSeconds(), static_cast<double>(ops1 - ops0) / (t1 - t0) / 1e3,
      static_cast<double>(ops2 - ops1) / (t2 - t1) / 1e3, result, load);
  return 0;
}
