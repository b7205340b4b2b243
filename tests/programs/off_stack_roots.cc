// tests/programs: the main thread's stack is a root even while the main thread runs elsewhere
// (a sigaltstack signal handler, a swapcontext fiber). For tests/scanner/RootRangesOffStackTest.
// Linked with libheapgraph.so and libheapgraph_scan.so (the C API).
//
//   off_stack_roots <how> <stack>
//     how:   altstack        main raises a signal whose handler runs on an alternate stack and
//                            checks there
//            altstack_other  the handler starts a thread that checks, and joins it
//            fiber           main swapcontext()s to a fiber that checks
//            fiber_other     the fiber starts a thread that checks, and joins it
//     stack: mmap            the alternate stack or fiber stack is a mapping of its own
//            malloc          it is a heap block (the glibc manual's way)
//
// Main first makes the stack, then leaks 3 chains of two blocks (a 4,242-byte block pointing to
// a 4,243-byte one: 3 direct and 3 indirect leaks) and scrubs the stack below its frame; then,
// from a frame that keeps a 5,151-byte block only in a local, runs the check as `how` says.
// Prints one line:
//   ok=1 off_stack=<1: the check ran with main's SP outside "[stack]"> direct=<n> indirect=<n>
//   leaked_bytes=<n>
// (ok=0 error=<...> and exit 1 when the check failed; 64 on a bad argument). The block kept by
// main's frame is not leaked: direct=3 indirect=3 leaked_bytes=25455.
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "heapgraph/heapgraph.h"

namespace {

constexpr size_t kHeadSize = 4242;
constexpr size_t kTailSize = 4243;
constexpr size_t kKeptSize = 5151;
constexpr int kChains = 3;
// Below glibc's mmap threshold (128 KiB): a malloc'd stack is a block of the brk heap.
constexpr size_t kStackSize = 96 << 10;

enum class How { kAltstack, kAltstackOther, kFiber, kFiberOther };

How g_how;
void* g_stack = nullptr;  // the alternate or fiber stack (kept: the program still uses it)
void* volatile g_sink;
heapgraph_leak_summary g_summary;
int g_checked = -1;
bool g_off_stack = false;

// Whether the running code's frame lies in g_stack.
__attribute__((noinline)) bool OnOwnStack() {
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const auto begin = reinterpret_cast<uintptr_t>(g_stack);
  return sp >= begin && sp < begin + kStackSize;
}

extern "C" __attribute__((noinline, used)) void LeakChains() {
  for (int i = 0; i < kChains; ++i) {
    void* tail = malloc(kTailSize);
    memset(tail, 0x22, kTailSize);
    void** head = static_cast<void**>(malloc(kHeadSize));
    memset(head, 0x11, kHeadSize);
    head[0] = tail;
    g_sink = head;
  }
  g_sink = nullptr;
}

// Zeroes the caller-saved registers, vector registers included: malloc (heapgraph's hook copies
// records with vector instructions) and memset leave block addresses in some of them. The kernel
// saves them all in the signal frame on the alternate stack, where the scan (rightly) finds them,
// and the lazy binder in dead frames of main's stack: the kept block must be kept by main's frame
// alone, and no leak by a stale copy.
__attribute__((noinline)) void ForgetScratchRegisters() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    asm volatile(
        "vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
        "vpxord %%zmm18, %%zmm18, %%zmm18\n\tvpxord %%zmm19, %%zmm19, %%zmm19\n\t"
        "vpxord %%zmm20, %%zmm20, %%zmm20\n\tvpxord %%zmm21, %%zmm21, %%zmm21\n\t"
        "vpxord %%zmm22, %%zmm22, %%zmm22\n\tvpxord %%zmm23, %%zmm23, %%zmm23\n\t"
        "vpxord %%zmm24, %%zmm24, %%zmm24\n\tvpxord %%zmm25, %%zmm25, %%zmm25\n\t"
        "vpxord %%zmm26, %%zmm26, %%zmm26\n\tvpxord %%zmm27, %%zmm27, %%zmm27\n\t"
        "vpxord %%zmm28, %%zmm28, %%zmm28\n\tvpxord %%zmm29, %%zmm29, %%zmm29\n\t"
        "vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31" ::
            : "memory");
  }
  if (__builtin_cpu_supports("avx")) {
    asm volatile("vzeroall" ::: "memory");
  } else {
    asm volatile(
        "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
        "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
        "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
        "pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
        "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\t"
        "pxor %%xmm15, %%xmm15" ::
            : "memory");
  }
  asm volatile(
      "xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\txor %%esi, %%esi\n\t"
      "xor %%edi, %%edi\n\txor %%r8d, %%r8d\n\txor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\t"
      "xor %%r11d, %%r11d"
      :
      :
      : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
#endif
}

// Zeroes the stack below the caller's frame: dead frames of LeakChains and malloc hold the
// leaked addresses, and a stack scanned whole (main's, while it runs elsewhere) reads below its
// SP. The registers first: the first call of a libc function through the PLT saves every
// register, vector ones included, at the bottom of the stack (the lazy binder's XSAVE).
__attribute__((noinline)) void ScrubStackBelow() {
  ForgetScratchRegisters();
  char area[256 * 1024];
  for (char& c : area) *static_cast<volatile char*>(&c) = 0;
  asm volatile("" : : "r"(area) : "memory");
}

void* CheckThread(void*) {
  g_checked = heapgraph_check_leaks(nullptr, nullptr, &g_summary);
  return nullptr;
}

// Runs the check on the alternate or fiber stack, or from a thread started there.
void CheckFromHere() {
  g_off_stack = OnOwnStack();
  if (g_how == How::kAltstack || g_how == How::kFiber) {
    CheckThread(nullptr);
    return;
  }
  pthread_t t;
  if (pthread_create(&t, nullptr, CheckThread, nullptr) == 0) pthread_join(t, nullptr);
}

void Handler(int) {
  CheckFromHere();
}

void FiberMain() {
  CheckFromHere();
}

// Keeps a block only in this frame while the check runs elsewhere.
extern "C" __attribute__((noinline, used)) void KeepAndCheck() {
  void* volatile frame[8] = {};
  frame[3] = malloc(kKeptSize);
  memset(frame[3], 0x33, kKeptSize);
  // Dead frames below this one may hold addresses of the chains: main's stack is scanned whole
  // while main runs elsewhere, dead frames included (the conservative scanner's caveat,
  // LeakSanitizer's too).
  ScrubStackBelow();
  if (g_how == How::kAltstack || g_how == How::kAltstackOther) {
    raise(SIGUSR1);
  } else {
    ucontext_t main_context, fiber;
    getcontext(&fiber);
    fiber.uc_stack.ss_sp = g_stack;
    fiber.uc_stack.ss_size = kStackSize;
    fiber.uc_link = &main_context;
    makecontext(&fiber, FiberMain, 0);
    swapcontext(&main_context, &fiber);
  }
  free(frame[3]);
}

bool MakeStack(bool use_malloc) {
  if (use_malloc) {
    g_stack = malloc(kStackSize);
  } else {
    void* p = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    g_stack = p == MAP_FAILED ? nullptr : p;
  }
  if (g_stack == nullptr) return false;
  if (g_how == How::kAltstack || g_how == How::kAltstackOther) {
    stack_t alt = {};
    alt.ss_sp = g_stack;
    alt.ss_size = kStackSize;
    struct sigaction action = {};
    action.sa_handler = Handler;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    return sigaltstack(&alt, nullptr) == 0 && sigaction(SIGUSR1, &action, nullptr) == 0;
  }
  return true;
}

bool ParseHow(const char* text) {
  const struct {
    const char* name;
    How how;
  } kHows[] = {{"altstack", How::kAltstack},
               {"altstack_other", How::kAltstackOther},
               {"fiber", How::kFiber},
               {"fiber_other", How::kFiberOther}};
  for (const auto& h : kHows) {
    if (std::strcmp(text, h.name) == 0) {
      g_how = h.how;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || !ParseHow(argv[1]) ||
      (std::strcmp(argv[2], "mmap") != 0 && std::strcmp(argv[2], "malloc") != 0)) {
    std::fprintf(stderr,
                 "usage: off_stack_roots altstack|altstack_other|fiber|fiber_other "
                 "mmap|malloc\n");
    return 64;
  }
  if (!MakeStack(std::strcmp(argv[2], "malloc") == 0)) {
    std::printf("ok=0 error=cannot set up the %s stack\n", argv[2]);
    return 1;
  }
  LeakChains();
  ScrubStackBelow();
  KeepAndCheck();
  if (g_checked < 0) {
    std::printf("ok=0 error=%s\n", g_summary.error);
    return 1;
  }
  std::printf("ok=1 off_stack=%d direct=%llu indirect=%llu leaked_bytes=%llu\n",
              g_off_stack ? 1 : 0, g_summary.direct_blocks, g_summary.indirect_blocks,
              g_summary.leaked_bytes);
  return 0;
}
