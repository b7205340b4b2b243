// bench/: unwind_bench — the per-allocation steps of the recorder in isolation (Google Benchmark):
//   BM_UnwBacktrace/<frames>  libunwind's unw_backtrace (the recorder's fallback until session 31)
//                             with UNW_CACHE_PER_THREAD as the recorder set it, called `frames`
//                             distinct noinline frames deep in code without frame pointers (this
//                             file is built -O2, default frame-pointer omission); counter frames =
//                             what unw_backtrace returned (our frames + the benchmark harness's +
//                             libc's)
//   BM_Capture/<frames>       heapgraph::StackCapture::Capture(depth 32): the cached rule walk
//   BM_CompleteWalk/<frames>  heapgraph::DwarfWalk::Walk (64 frames at most): the complete,
//                             uncached walk that takes the stacks the rule walk cannot
//   BM_CaptureMemo/<frames>   the same with the thread's WalkMemo (the recorder's default): the
//                             same stack every time, so the memo's best case
//   BM_SignalCapture/<capture> a signal (raise(SIGUSR2)) whose handler captures its stack with
//                             StackCapture::Capture (capture = 1; the rule walk meets glibc's
//                             signal frame and goes on by MixedWalk), with libunwind's
//                             unw_backtrace (2), or does nothing (0): the difference is a capture
//                             through a signal frame, from 8 frames deep; counter capture_ns =
//                             the capture alone, timed inside the handler
//   BM_GlibcBacktrace/<frames> glibc backtrace() (libgcc's DWARF unwinder), for comparison
//   BM_FramePointerWalk/<frames> following saved frame pointers — only valid in code built with
//                             -fno-omit-frame-pointer (the chain here is compiled with it), shown
//                             as the lower bound of any unwinder
//   BM_ThreadLocalGuard       the recorder's TLS guard set/clear (initial-exec)
// ns per frame = slope of ns/call against `frames` (docs/performance.md fits it).
#define UNW_LOCAL_ONLY
#include <benchmark/benchmark.h>
#include <execinfo.h>
#include <libunwind.h>
#include <signal.h>
#include <time.h>

#include <array>
#include <cstdint>
#include <utility>

#include "heap/platform/DwarfWalk.h"
#include "heap/runtime/StackCapture.h"
#include "heap/runtime/WalkMemo.h"

namespace {

enum class Method {
  kRaise,  // a signal whose handler does the work (BM_SignalCapture)
  kUnw,
  kCapture,
  kCaptureCold,
  kCaptureMemo,
  kCompleteWalk,
  kGlibc,
  kFramePointer
};
// The benchmark thread's memo of its last walk (BM_CaptureMemo), in static TLS like the recorder's.
__thread heapgraph::WalkMemo t_bench_memo __attribute__((tls_model("initial-exec")));

struct Context {
  benchmark::State* state;
  Method method;
  int64_t returned = 0;
};

#define KEEP_FRAME() asm volatile("" ::: "memory")

__attribute__((noinline, optimize("no-omit-frame-pointer"))) int FramePointerWalk(void** out,
                                                                                  int max) {
  auto** fp = static_cast<void**>(__builtin_frame_address(0));
  int n = 0;
  while (fp != nullptr && n < max) {
    void* ret = fp[1];
    if (ret == nullptr) break;
    out[n++] = ret;
    auto** next = static_cast<void**>(fp[0]);
    if (next <= fp) break;  // the chain ends where frame pointers stop (harness, libc)
    fp = next;
  }
  return n;
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) void Leaf(Context& c) {
  uintptr_t frames[64 + heapgraph::StackCapture::kMaxOwnFrames];
  int n = 0;
  switch (c.method) {
    case Method::kRaise:  // BM_SignalCapture: the handler captures
      for (auto _ : *c.state) raise(SIGUSR2);
      break;
    case Method::kUnw:
      for (auto _ : *c.state) {
        n = unw_backtrace(reinterpret_cast<void**>(frames), 64);
        benchmark::DoNotOptimize(frames);
      }
      break;
    case Method::kCapture:
      for (auto _ : *c.state) {
        n = int(heapgraph::StackCapture::Capture(frames, 32));
        benchmark::DoNotOptimize(frames);
      }
      break;
    case Method::kCaptureCold:
      for (auto _ : *c.state) {
        heapgraph::StackCapture::ForgetRuleWalkRules();
        n = int(heapgraph::StackCapture::Capture(frames, 32));
        benchmark::DoNotOptimize(frames);
      }
      break;
    case Method::kCaptureMemo:
      for (auto _ : *c.state) {
        n = int(heapgraph::StackCapture::Capture(frames, 32, &t_bench_memo));
        benchmark::DoNotOptimize(frames);
      }
      break;
    case Method::kCompleteWalk:
      for (auto _ : *c.state) {
        heapgraph::FrameRegisters registers;
        HeapgraphCaptureCallerRegisters(&registers);
        n = heapgraph::DwarfWalk::Walk(registers, frames, nullptr, 64);
        benchmark::DoNotOptimize(frames);
      }
      break;
    case Method::kGlibc:
      for (auto _ : *c.state) {
        n = backtrace(reinterpret_cast<void**>(frames), 64);
        benchmark::DoNotOptimize(frames);
      }
      break;
    case Method::kFramePointer:
      for (auto _ : *c.state) {
        n = FramePointerWalk(reinterpret_cast<void**>(frames), 64);
        benchmark::DoNotOptimize(frames);
      }
      break;
  }
  c.returned = n;
  KEEP_FRAME();
}

// Chain<N> puts N distinct frames above Leaf.
template <int N>
__attribute__((noinline, optimize("no-omit-frame-pointer"))) void ChainFp(Context& c) {
  if constexpr (N == 0) {
    Leaf(c);
  } else {
    ChainFp<N - 1>(c);
  }
  c.returned += 0;
  KEEP_FRAME();
}

template <int N>
__attribute__((noinline)) void Chain(Context& c) {
  if constexpr (N == 0) {
    Leaf(c);
  } else {
    Chain<N - 1>(c);
  }
  c.returned += 0;
  KEEP_FRAME();
}

using ChainFn = void (*)(Context&);
template <std::size_t... I>
constexpr auto MakeTable(std::index_sequence<I...>) {
  return std::array<ChainFn, sizeof...(I)>{&Chain<int(I)>...};
}
template <std::size_t... I>
constexpr auto MakeFpTable(std::index_sequence<I...>) {
  return std::array<ChainFn, sizeof...(I)>{&ChainFp<int(I)>...};
}
constexpr auto kChain = MakeTable(std::make_index_sequence<49>{});
constexpr auto kChainFp = MakeFpTable(std::make_index_sequence<49>{});

// The recorder's unwinder set up, and libunwind's per-thread cache as the recorder asked for it.
void InitializeOnce() {
  static bool initialized = [] {
    heapgraph::StackCapture::Initialize();
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);  // as the recorder did
    return true;
  }();
  (void)initialized;
}

void Run(benchmark::State& state, Method method) {
  InitializeOnce();
  Context c{&state, method};
  int frames = int(state.range(0));
  if (method == Method::kFramePointer) {
    kChainFp[frames](c);
  } else {
    kChain[frames](c);
  }
  state.counters["frames"] = double(c.returned);
}

void BM_UnwBacktrace(benchmark::State& state) {
  Run(state, Method::kUnw);
}
void BM_Capture(benchmark::State& state) {
  Run(state, Method::kCapture);
}
// Every frame's rule read from .eh_frame again (the rule cache forgotten before each capture): a
// capture of code not seen before, as a short program's first captures are.
void BM_CaptureCold(benchmark::State& state) {
  Run(state, Method::kCaptureCold);
}
void BM_CaptureMemo(benchmark::State& state) {
  Run(state, Method::kCaptureMemo);
}
void BM_CompleteWalk(benchmark::State& state) {
  Run(state, Method::kCompleteWalk);
}
void BM_GlibcBacktrace(benchmark::State& state) {
  Run(state, Method::kGlibc);
}
void BM_FramePointerWalk(benchmark::State& state) {
  Run(state, Method::kFramePointer);
}

BENCHMARK(BM_UnwBacktrace)->Arg(0)->Arg(4)->Arg(8)->Arg(16)->Arg(24)->Arg(32)->Arg(48);
BENCHMARK(BM_Capture)->Arg(0)->Arg(8)->Arg(24);
BENCHMARK(BM_CaptureCold)->Arg(0)->Arg(8)->Arg(24);
BENCHMARK(BM_CaptureMemo)->Arg(0)->Arg(8)->Arg(24);
BENCHMARK(BM_CompleteWalk)->Arg(0)->Arg(8)->Arg(24);
BENCHMARK(BM_GlibcBacktrace)->Arg(0)->Arg(8)->Arg(24);
BENCHMARK(BM_FramePointerWalk)->Arg(0)->Arg(8)->Arg(24)->Arg(48);

int signal_capture = 0;  // BM_SignalCapture's argument
int signal_frames = 0;
int64_t signal_capture_ns = 0;  // the captures' own time, summed inside the handler

int64_t MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

void OnSignal(int) {
  if (signal_capture == 0) return;
  uintptr_t frames[32 + heapgraph::StackCapture::kMaxOwnFrames];
  const int64_t begin = MonotonicNs();
  if (signal_capture == 1) {
    signal_frames = int(heapgraph::StackCapture::Capture(frames, 32));
  } else {
    signal_frames = unw_backtrace(reinterpret_cast<void**>(frames), 32);
  }
  signal_capture_ns += MonotonicNs() - begin;
  benchmark::DoNotOptimize(frames);
}

void BM_SignalCapture(benchmark::State& state) {
  InitializeOnce();
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigaction(SIGUSR2, &action, nullptr);
  signal_capture = int(state.range(0));
  signal_frames = 0;
  signal_capture_ns = 0;
  Context c{&state, Method::kRaise};
  kChain[8](c);
  signal(SIGUSR2, SIG_DFL);
  state.counters["frames"] = double(signal_frames);
  // The capture alone (the signal's delivery varies by microseconds on this machine).
  state.counters["capture_ns"] =
      benchmark::Counter(double(signal_capture_ns), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SignalCapture)->Arg(0)->Arg(1)->Arg(2);

__thread bool t_guard __attribute__((tls_model("initial-exec"))) = false;

__attribute__((noinline)) bool GuardedHook(bool* entered) {
  if (t_guard) return false;
  t_guard = true;
  *entered = true;
  benchmark::ClobberMemory();
  t_guard = false;
  return true;
}

void BM_ThreadLocalGuard(benchmark::State& state) {
  bool entered = false;
  for (auto _ : state) benchmark::DoNotOptimize(GuardedHook(&entered));
}
BENCHMARK(BM_ThreadLocalGuard);

}  // namespace

BENCHMARK_MAIN();
