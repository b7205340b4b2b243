// bench/: churn_workload, the allocation-churn program that docs/performance.md measures with and
// without a recorder preloaded (heapgraph, heaptrack, LSan). A plain program: no benchmark library,
// no heapgraph headers, built with Debian's default flags (-O2, no frame pointers), so an unwinder
// has to use DWARF CFI exactly as in a distribution binary.
//
// Each thread keeps --working-set live blocks in a slot array. One op frees a random slot and
// mallocs a new block (16 B .. 4 KiB, log-uniform, deterministic PRNG) into it: one malloc+free
// pair. The ops run --depth frames deep: `--depth D` is the number of return addresses on the stack
// at every malloc call (what backtrace() returns there, libc's thread-start frames included),
// built from a chain of distinct noinline functions, so every frame is a real, distinct return
// address. Four leaf call paths (two frames each) vary the innermost frames. The program writes one
// byte of each new block; with --fill it writes all of them (memset), as a constructor or a buffer
// fill would, so that the program fetches a new block's lines itself, whatever a recorder does.
//
// Output (stdout, one line): churn threads=N depth=D pairs=P ns_per_pair=X cpu_ns_per_pair=C
//   P = pairs over all threads; X = per-thread (loop wall time / its pairs), averaged over threads;
//   C = the same with the thread's CPU time (robust when the machine is oversubscribed; excludes
//   time a recorder spends blocked, e.g. on heaptrack's pipe).
#include <execinfo.h>
#include <pthread.h>
#include <time.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace {

// Frames that are always on the stack at the malloc call: clone3, start_thread, ThreadEntry,
// Descend<0>, OpLoop, LeafOuter, LeafInner. Descend<N> adds N more.
constexpr int kFixedFrames = 7;
constexpr int kMaxChain = 64;

struct Options {
  int threads = 1;
  int depth = 10;
  long ops = 2'000'000;
  long working_set = 10'000;
  uint64_t seed = 1;
  bool print_depth = false;
  bool fill = false;
};

struct Worker {
  int index = 0;
  long ops = 0;
  long working_set = 0;
  uint64_t rng = 0;
  void** slots = nullptr;
  double ns_per_pair = 0;
  double cpu_ns_per_pair = 0;
  int chain = 0;
  pthread_barrier_t* barrier = nullptr;
  bool print_depth = false;
  bool fill = false;
  volatile uint64_t sink = 0;
};

inline uint64_t Next(uint64_t& s) {  // splitmix64
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// 16 B .. 4 KiB, log-uniform: an exponent 4..11, then uniform within [2^e, 2^(e+1)).
inline size_t SizeFrom(uint64_t r) {
  unsigned e = 4 + static_cast<unsigned>(r % 8);
  size_t base = size_t{1} << e;
  return base + static_cast<size_t>((r >> 8) % base);
}

uint64_t NowNs(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Keeps a call out of tail position (no sibling-call optimisation: every frame stays real).
#define KEEP_FRAME() asm volatile("" ::: "memory")

// The four leaf call paths. `K` makes every instance's body distinct (no identical-code folding).
template <int K>
__attribute__((noinline)) void LeafInner(Worker& w, long slot, size_t size) {
  if (__builtin_expect(w.print_depth, 0)) {
    void* frames[128];
    int n = backtrace(frames, 128);
    std::fprintf(stderr, "churn: thread %d leaf %d: %d frames at the malloc call\n", w.index, K, n);
    w.print_depth = false;
  }
  free(w.slots[slot]);
  auto* p = static_cast<unsigned char*>(malloc(size));
  if (w.fill) {
    std::memset(p, K, size);
  } else {
    p[0] = static_cast<unsigned char>(K);  // touch the block as a program would
  }
  w.slots[slot] = p;
  KEEP_FRAME();
}

template <int K>
__attribute__((noinline)) void LeafOuter(Worker& w, long slot, size_t size) {
  LeafInner<K>(w, slot, size);
  w.sink = w.sink + K;
  KEEP_FRAME();
}

inline void Op(Worker& w, uint64_t r, long slot, size_t size) {
  switch ((r >> 61) & 3) {
    case 0: LeafOuter<0>(w, slot, size); break;
    case 1: LeafOuter<1>(w, slot, size); break;
    case 2: LeafOuter<2>(w, slot, size); break;
    default: LeafOuter<3>(w, slot, size); break;
  }
}

__attribute__((noinline)) void OpLoop(Worker& w) {
  // Fill the working set through the same call paths (not timed; warms every recorder cache).
  for (long i = 0; i < w.working_set; ++i) Op(w, Next(w.rng), i, SizeFrom(Next(w.rng)));
  // A few extra rounds so the allocator reaches its steady state before timing.
  for (long i = 0; i < w.working_set; ++i) {
    uint64_t r = Next(w.rng);
    Op(w, r, static_cast<long>(r % static_cast<uint64_t>(w.working_set)), SizeFrom(Next(w.rng)));
  }
  pthread_barrier_wait(w.barrier);
  uint64_t start = NowNs(), cpu_start = NowNs(CLOCK_THREAD_CPUTIME_ID);
  for (long i = 0; i < w.ops; ++i) {
    uint64_t r = Next(w.rng);
    Op(w, r, static_cast<long>(r % static_cast<uint64_t>(w.working_set)), SizeFrom(Next(w.rng)));
  }
  uint64_t end = NowNs(), cpu_end = NowNs(CLOCK_THREAD_CPUTIME_ID);
  w.ns_per_pair = static_cast<double>(end - start) / static_cast<double>(w.ops);
  w.cpu_ns_per_pair = static_cast<double>(cpu_end - cpu_start) / static_cast<double>(w.ops);
  pthread_barrier_wait(w.barrier);
  for (long i = 0; i < w.working_set; ++i) {
    free(w.slots[i]);
    w.slots[i] = nullptr;
  }
  KEEP_FRAME();
}

// Descend<N> adds N frames above OpLoop.
template <int N>
__attribute__((noinline)) void Descend(Worker& w) {
  if constexpr (N == 0) {
    OpLoop(w);
  } else {
    Descend<N - 1>(w);
  }
  w.sink = w.sink + N;
  KEEP_FRAME();
}

using DescendFn = void (*)(Worker&);

template <std::size_t... I>
constexpr auto MakeDescendTable(std::index_sequence<I...>) {
  return std::array<DescendFn, sizeof...(I)>{&Descend<static_cast<int>(I)>...};
}

void* ThreadEntry(void* arg) {
  auto& w = *static_cast<Worker*>(arg);
  static constexpr auto kTable = MakeDescendTable(std::make_index_sequence<kMaxChain + 1>{});
  kTable[w.chain](w);
  KEEP_FRAME();
  return nullptr;
}

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--threads N] [--depth D] [--ops M] [--working-set W] [--seed S] "
               "[--print-depth] [--fill]\n"
               "  --depth D: frames on the stack at each malloc call, %d..%d\n",
               argv0, kFixedFrames, kFixedFrames + kMaxChain);
  std::exit(2);
}

long ParseLong(const char* argv0, const char* text) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) Usage(argv0);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (std::strcmp(argv[i], "--threads") == 0) {
      o.threads = static_cast<int>(ParseLong(argv[0], value()));
    } else if (std::strcmp(argv[i], "--depth") == 0) {
      o.depth = static_cast<int>(ParseLong(argv[0], value()));
    } else if (std::strcmp(argv[i], "--ops") == 0) {
      o.ops = ParseLong(argv[0], value());
    } else if (std::strcmp(argv[i], "--working-set") == 0) {
      o.working_set = ParseLong(argv[0], value());
    } else if (std::strcmp(argv[i], "--seed") == 0) {
      o.seed = static_cast<uint64_t>(ParseLong(argv[0], value()));
    } else if (std::strcmp(argv[i], "--print-depth") == 0) {
      o.print_depth = true;
    } else if (std::strcmp(argv[i], "--fill") == 0) {
      o.fill = true;
    } else {
      Usage(argv[0]);
    }
  }
  if (o.depth < kFixedFrames || o.depth > kFixedFrames + kMaxChain || o.threads > 64) Usage(argv[0]);

  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, nullptr, static_cast<unsigned>(o.threads));
  std::vector<Worker> workers(static_cast<size_t>(o.threads));
  std::vector<pthread_t> ids(workers.size());
  for (int t = 0; t < o.threads; ++t) {
    Worker& w = workers[static_cast<size_t>(t)];
    w.index = t;
    w.ops = o.ops;
    w.working_set = o.working_set;
    w.rng = o.seed * 0x100000001b3ull + static_cast<uint64_t>(t) + 1;
    w.slots = static_cast<void**>(std::calloc(static_cast<size_t>(o.working_set), sizeof(void*)));
    w.chain = o.depth - kFixedFrames;
    w.barrier = &barrier;
    w.print_depth = o.print_depth;
    w.fill = o.fill;
  }
  for (int t = 0; t < o.threads; ++t) {
    if (pthread_create(&ids[static_cast<size_t>(t)], nullptr, ThreadEntry, &workers[static_cast<size_t>(t)]) != 0) {
      std::perror("pthread_create");
      return 1;
    }
  }
  double sum = 0, cpu_sum = 0;
  for (int t = 0; t < o.threads; ++t) {
    pthread_join(ids[static_cast<size_t>(t)], nullptr);
    sum += workers[static_cast<size_t>(t)].ns_per_pair;
    cpu_sum += workers[static_cast<size_t>(t)].cpu_ns_per_pair;
  }
  for (auto& w : workers) std::free(w.slots);
  pthread_barrier_destroy(&barrier);
  std::printf("churn threads=%d depth=%d pairs=%ld ns_per_pair=%.1f cpu_ns_per_pair=%.1f\n",
              o.threads, o.depth, o.ops * o.threads, sum / o.threads, cpu_sum / o.threads);
  return 0;
}
