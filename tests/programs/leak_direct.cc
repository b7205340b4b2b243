// tests/programs: direct leaks for the leak scanner's accuracy test
// (tests/scanner/LeakAccuracyTest). Usage: leak_direct CASE. Every allocation site is a distinctly
// named extern "C" noinline function (the test finds it in the leak record's stack); every leaked
// block is zero-filled (stale heap contents must not create edges) and its size is a multiple of 16
// (a glibc chunk header pointer of the next chunk then never lands inside the block's requested
// size).
//   malloc calloc realloc reallocarray memalign posix_memalign aligned_alloc valloc pvalloc
//   new new_array   one block from that function, pointer dropped, stack scrubbed
//   all             every case above in one process
//   all_but_pvalloc every case above but pvalloc (Valgrind aborts on pvalloc)
//   thread          4 threads each leak one block, scrub their stacks, exit; joined
//   thread_stale    4 threads each leak one block whose pointer stays in their (dead, cached)
//                   stack frame; joined. glibc keeps the stack mapped for reuse.
//   dead_frame_main   a block whose only pointer is in a frame 256 KiB below main's SP; main
//                     then returns without calling anything that could reach that deep
//   dead_frame_thread a block whose only pointer is 32 KiB below the SP of a thread that then
//                     blocks (alive at exit) in read(2)
//   stale_bytes     a leaked 64-byte block whose address is also in the never-written bytes of a
//                   block kept in a global (KeptBlank): glibc handed KeptBlank the memory of a
//                   freed block that pointed to a freed block whose address the leak then got.
//                   Exits 65 if glibc did not reuse both chunks (the case would prove nothing)
// Prints nothing; exits 0 (64 on a bad argument).
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "ProgramSupport.h"

#define SITE extern "C" __attribute__((noinline, used))

namespace {

// Tells the compiler `p` is used (the allocation cannot be dropped) without storing it anywhere.
inline void Use(const volatile void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

// Zeroes the caller-saved registers (their last values may be copies of a leaked pointer, left by
// malloc or memset) so that a thread that blocks right after holds none.
inline void ClearScratchRegisters() {
  asm volatile(
      "xor %%eax, %%eax\n xor %%ecx, %%ecx\n xor %%edx, %%edx\n xor %%esi, %%esi\n"
      "xor %%edi, %%edi\n xor %%r8d, %%r8d\n xor %%r9d, %%r9d\n xor %%r10d, %%r10d\n"
      "xor %%r11d, %%r11d\n"
      "pxor %%xmm0, %%xmm0\n pxor %%xmm1, %%xmm1\n pxor %%xmm2, %%xmm2\n pxor %%xmm3, %%xmm3\n"
      "pxor %%xmm4, %%xmm4\n pxor %%xmm5, %%xmm5\n pxor %%xmm6, %%xmm6\n pxor %%xmm7, %%xmm7\n"
      "pxor %%xmm8, %%xmm8\n pxor %%xmm9, %%xmm9\n pxor %%xmm10, %%xmm10\n"
      "pxor %%xmm11, %%xmm11\n pxor %%xmm12, %%xmm12\n pxor %%xmm13, %%xmm13\n"
      "pxor %%xmm14, %%xmm14\n pxor %%xmm15, %%xmm15\n"
      :
      :
      : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3",
        "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
        "xmm15", "memory", "cc");
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// One block per allocation function.

struct LeakObject {
  uint64_t words[14];  // 112 bytes
};

SITE void LeakMalloc() {
  void* volatile p = malloc(64);
  memset(p, 0, 64);
  p = nullptr;
}

SITE void LeakCalloc() {
  void* volatile p = calloc(6, 16);  // 96
  Use(p);
  p = nullptr;
}

SITE void LeakRealloc() {
  void* volatile p = malloc(32);
  memset(p, 0, 32);
  p = realloc(p, 4096);  // grown: a different block
  memset(p, 0, 4096);
  p = nullptr;
}

SITE void LeakReallocarray() {
  void* volatile p = malloc(48);
  memset(p, 0, 48);
  p = reallocarray(p, 10, 32);  // 320
  memset(p, 0, 320);
  p = nullptr;
}

SITE void LeakMemalign() {
  void* volatile p = memalign(64, 192);
  memset(p, 0, 192);
  p = nullptr;
}

SITE void LeakPosixMemalign() {
  void* slot = nullptr;
  if (posix_memalign(&slot, 128, 224) != 0) abort();
  memset(slot, 0, 224);
  slot = nullptr;
  Use(&slot);
}

SITE void LeakAlignedAlloc() {
  void* volatile p = aligned_alloc(256, 512);
  memset(p, 0, 512);
  p = nullptr;
}

SITE void LeakValloc() {
  void* volatile p = valloc(272);
  memset(p, 0, 272);
  p = nullptr;
}

SITE void LeakPvalloc() {
  void* volatile p = pvalloc(8192);  // already a page multiple: recorded and real size agree
  memset(p, 0, 8192);
  p = nullptr;
}

SITE void LeakNew() {
  LeakObject* volatile p = new LeakObject();  // 112, value-initialized (zero)
  p = nullptr;
  Use(&p);
}

SITE void LeakNewArray() {
  uint64_t* volatile p = new uint64_t[18]();  // 144, no array cookie (trivial destructor)
  p = nullptr;
  Use(&p);
}

// ------------------------------------------------------------------------------------------------
// Threads.

constexpr int kThreads = 4;

SITE void LeakInThread() {
  void* volatile p = malloc(208);
  memset(p, 0, 208);
  p = nullptr;
}

SITE void* LeakingThreadMain(void*) {
  LeakInThread();
  hgprog::ScrubStack();
  return nullptr;
}

// The pointer stays in this frame when the thread exits: the frame is just below start_thread's,
// inside the 16 KiB that glibc does not madvise away, and the stack goes to glibc's cache.
SITE void* LeakInThreadStale(void*) {
  void* volatile p = malloc(224);
  memset(p, 0, 224);
  Use(&p);
  return nullptr;
}

SITE void SpawnThreads(void* (*body)(void*)) {
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    if (pthread_create(&threads[i], nullptr, body, nullptr) != 0) abort();
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], nullptr);
}

// ------------------------------------------------------------------------------------------------
// Pointers left only in dead frames below SP.

// 1 KiB per frame; the block is allocated in the deepest frame and its pointer stays there.
SITE void LeakInDeadFrame(int depth) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(depth);
  if (depth > 0) {
    LeakInDeadFrame(depth - 1);
    pad[1] = pad[0];  // not a tail call
    return;
  }
  void* volatile p = malloc(256);
  memset(p, 0, 256);
  Use(&p);
}

SITE void LeakInDeadFrameThread(int depth) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(depth);
  if (depth > 0) {
    LeakInDeadFrameThread(depth - 1);
    pad[1] = pad[0];
    return;
  }
  void* volatile p = malloc(240);
  memset(p, 0, 240);
  Use(&p);
}

namespace {

int g_block_pipe[2];
std::atomic<int> g_thread_ready{0};

}  // namespace

SITE void* DeadFrameThreadMain(void*) {
  LeakInDeadFrameThread(31);  // the pointer ends 32 KiB below this frame
  ClearScratchRegisters();
  g_thread_ready.store(1);
  for (;;) {
    char c;
    ssize_t n = read(g_block_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) pause();
  }
  return nullptr;
}

SITE void StartBlockedThread(void* (*body)(void*)) {
  if (pipe(g_block_pipe) != 0) abort();
  pthread_t thread;
  if (pthread_create(&thread, nullptr, body, nullptr) != 0) abort();
  pthread_detach(thread);
  while (g_thread_ready.load() == 0) usleep(1000);
}

// ------------------------------------------------------------------------------------------------
// A leak behind stale bytes (issue 11, found in yaml-cpp's suite).

void* volatile g_blank = nullptr;

// A 96-byte holder pointing (at +48, past the 16 bytes glibc's free list writes) to a 64-byte
// block; both freed, their addresses returned.
SITE void ReleaseHolderAndTarget(uintptr_t* holder, uintptr_t* target) {
  auto* h = static_cast<void**>(malloc(96));
  memset(h, 0, 96);
  void* t = malloc(64);
  memset(t, 0, 64);
  h[6] = t;
  *holder = reinterpret_cast<uintptr_t>(h);
  *target = reinterpret_cast<uintptr_t>(t);
  free(t);
  free(h);
  // Frees of another size after them: the recorder applies a thread's frees 16 at a time
  // (batch_frees), last queued first, so glibc holds the two chunks once these are queued too.
  void* others[16];
  for (void*& other : others) other = malloc(200);
  for (void* other : others) free(other);
}

SITE void* KeptBlank() {
  return malloc(96);  // never written: what the freed holder left is still there
}

SITE void LeakBehindStaleBytes() {
  uintptr_t holder = 0;
  uintptr_t target = 0;
  ReleaseHolderAndTarget(&holder, &target);
  void* volatile leaked = malloc(64);  // the target's chunk again (glibc's per-thread cache)
  memset(leaked, 0, 64);
  g_blank = KeptBlank();  // the holder's chunk again
  if (reinterpret_cast<uintptr_t>(leaked) != target ||
      reinterpret_cast<uintptr_t>(g_blank) != holder) {
    fprintf(stderr, "leak_direct: stale_bytes: glibc did not hand out the freed chunks again\n");
    exit(65);
  }
  leaked = nullptr;
  holder = target = 0;
}

// ------------------------------------------------------------------------------------------------

namespace {

struct Case {
  const char* name;
  void (*run)();
};

const Case kAllocationCases[] = {
    {"malloc", LeakMalloc},
    {"calloc", LeakCalloc},
    {"realloc", LeakRealloc},
    {"reallocarray", LeakReallocarray},
    {"memalign", LeakMemalign},
    {"posix_memalign", LeakPosixMemalign},
    {"aligned_alloc", LeakAlignedAlloc},
    {"valloc", LeakValloc},
    {"pvalloc", LeakPvalloc},
    {"new", LeakNew},
    {"new_array", LeakNewArray},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: leak_direct CASE\n");
    return 64;
  }
  const char* name = argv[1];
  bool all_but_pvalloc = strcmp(name, "all_but_pvalloc") == 0;
  bool all = all_but_pvalloc || strcmp(name, "all") == 0;
  bool known = all;
  for (const Case& c : kAllocationCases) {
    if (all_but_pvalloc && c.run == LeakPvalloc) continue;
    if (all || strcmp(name, c.name) == 0) {
      c.run();
      hgprog::ScrubStack();
      known = true;
    }
  }
  if (strcmp(name, "thread") == 0) {
    SpawnThreads(LeakingThreadMain);
    hgprog::ScrubStack();
    known = true;
  } else if (strcmp(name, "thread_stale") == 0) {
    SpawnThreads(LeakInThreadStale);
    hgprog::ScrubStack();
    known = true;
  } else if (strcmp(name, "dead_frame_main") == 0) {
    // No scrub, and nothing deep afterwards: exit() and the scan run far above 256 KiB.
    LeakInDeadFrame(255);
    return 0;
  } else if (strcmp(name, "stale_bytes") == 0) {
    LeakBehindStaleBytes();
    hgprog::ScrubStack();
    known = true;
  } else if (strcmp(name, "dead_frame_thread") == 0) {
    StartBlockedThread(DeadFrameThreadMain);
    hgprog::ScrubStack();
    known = true;
  }
  if (!known) {
    fprintf(stderr, "leak_direct: unknown case %s\n", name);
    return 64;
  }
  return 0;
}
