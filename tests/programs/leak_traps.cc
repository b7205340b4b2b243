// tests/programs: blocks that are NOT leaks although their only reference is somewhere unusual,
// for the leak scanner's accuracy test (tests/scanner/LeakAccuracyTest). Usage:
//   leak_traps CASE          one trap, then LeakControl leaks one 272-byte block (the control:
//                            proves the scan ran and reports real leaks)
//   leak_traps all           every trap except the register ones, then the control
//   leak_traps clean [STATUS]  every trap except the register ones, no control; exits STATUS
// Traps (the named function is the allocation site, which must appear in no leak record):
//   global        KeptInGlobal          pointer only in an initialized global (.data)
//   bss           KeptInBss             pointer only in a zero-initialized global (.bss)
//   static_local  KeptInStaticLocal     pointer only in a dynamically initialized static local
//   tls_main      KeptInMainTls         pointer only in a __thread variable of the main thread
//   tls_thread    KeptInThreadTls       pointer only in a __thread variable of a thread that is
//                                       blocked in read(2) at exit
//   dlopen_tls    KeptInDlopenTls       pointer only in a __thread variable of a dlopen'd library
//                                       (libleak_tls_lib.so, next to this program); OpenTlsLib's
//                                       allocations (dlopen's) must not be reported either
//   pthread_key   KeptInPthreadKey      pointer only in a pthread key >= 32 (glibc keeps those
//                                       in a second-level array it callocs)
//   deep_stack    KeptDeepOnStack       pointer only in the deepest of 200 frames (~100 KiB) of
//                                       a thread blocked in read(2)
//   interior      KeptByInteriorPointer only a pointer to the middle of the block, in a global
//   mmap          KeptInMmap            pointer only in an anonymous private mapping (made by
//                                       MapRootRegion; its address is kept in a global)
//   stl           KeptInStlContainers   map<string, vector<string>>, unordered_map, list, deque
//                                       and a make_shared object, in never-destroyed globals
//   array_cookie  KeptViaArrayCookie    new T[5] of a T with a destructor: only the returned
//                                       pointer (block + 8, past the cookie) is kept
//   second_base   KeptViaSecondBase     only a pointer to the second base subobject (block + 48)
//   end_pointer   KeptByEndPointer      only a pointer one past the block's end (1000 bytes), in a
//                                       global; LeakAfterEndPointer's block, allocated right
//                                       after it (the next chunk: plain, the end pointer lies
//                                       in its header; recorded, in the block's own tag), IS a
//                                       leak and must be reported. Not in `all`:
//                                       Valgrind counts no end pointer
//   register_r12  KeptInRegisterR12     pointer only in r12 of a thread spinning at exit
//   register_xmm7 KeptInRegisterXmm7    pointer only in xmm7 of a thread spinning at exit
// Threads that must be alive at exit are detached and never woken: main returns while they block
// or spin, and the scan runs after static destructors with them still there. Prints nothing
// (errors on stderr); exits 0, or STATUS for `clean`, or 64 on a bad argument.
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "ProgramSupport.h"

#define SITE extern "C" __attribute__((noinline, used))

namespace {

inline void Use(const volatile void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

}  // namespace

SITE void* AllocateZeroed(size_t size) {
  void* p = malloc(size);
  if (p == nullptr) abort();
  memset(p, 0, size);
  Use(p);
  return p;
}

// The control: a real direct leak of 272 bytes.
SITE void LeakControl() {
  void* volatile p = malloc(272);
  memset(p, 0, 272);
  p = nullptr;
}

// ------------------------------------------------------------------------------------------------
// Globals, static locals, TLS, keys.

uintptr_t volatile g_kept_data_word = 1;  // initialized: .data
void* volatile g_kept_bss;                // zero-initialized: .bss

SITE void KeptInGlobal() {
  g_kept_data_word = reinterpret_cast<uintptr_t>(AllocateZeroed(304));
}

SITE void KeptInBss() {
  g_kept_bss = AllocateZeroed(320);
}

SITE void KeptInStaticLocal() {
  static void* volatile slot = AllocateZeroed(336);  // guarded dynamic initialization
  Use(&slot);
}

__thread void* volatile t_kept_main;
__thread void* volatile t_kept_thread;

SITE void KeptInMainTls() {
  t_kept_main = AllocateZeroed(352);
}

SITE void* OpenTlsLib() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
  if (n <= 0) abort();
  path[n] = '\0';
  char* slash = strrchr(path, '/');
  if (slash == nullptr) abort();
  strcpy(slash + 1, "libleak_tls_lib.so");
  void* handle = dlopen(path, RTLD_NOW);
  if (handle == nullptr) {
    fprintf(stderr, "leak_traps: %s\n", dlerror());
    abort();
  }
  return handle;
}

SITE void KeptInDlopenTls() {
  void* handle = OpenTlsLib();
  auto store = reinterpret_cast<void (*)(void*)>(dlsym(handle, "LeakTlsLibStore"));
  if (store == nullptr) abort();
  store(AllocateZeroed(384));
}

SITE void KeptInPthreadKey() {
  static pthread_key_t keys[40];
  for (pthread_key_t& key : keys) {
    if (pthread_key_create(&key, nullptr) != 0) abort();
  }
  if (keys[39] < 32) {
    fprintf(stderr, "leak_traps: key %u is not in glibc's second level\n", keys[39]);
    abort();
  }
  if (pthread_setspecific(keys[39], AllocateZeroed(400)) != 0) abort();
}

// ------------------------------------------------------------------------------------------------
// Threads alive at exit.

namespace {

int g_block_pipe[2] = {-1, -1};

[[noreturn]] void BlockForever() {
  for (;;) {
    char c;
    ssize_t n = read(g_block_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) pause();
  }
}

}  // namespace

// Starts a detached thread running body(ready) and waits until it stores 1 in *ready.
SITE void StartThread(void* (*body)(void*), std::atomic<int>* ready) {
  if (g_block_pipe[0] < 0 && pipe(g_block_pipe) != 0) abort();
  pthread_t thread;
  if (pthread_create(&thread, nullptr, body, ready) != 0) abort();
  pthread_detach(thread);
  while (ready->load() == 0) usleep(1000);
}

SITE void* KeptInThreadTls(void* ready) {
  t_kept_thread = AllocateZeroed(368);
  hgprog::ScrubStack();
  static_cast<std::atomic<int>*>(ready)->store(1);
  BlockForever();
}

// ~512 bytes per frame, 200 frames; the pointer lives in the deepest one, which blocks (GCC
// rightly sees that no call returns).
#pragma GCC diagnostic ignored "-Winfinite-recursion"
SITE void KeptDeepOnStack(int depth, std::atomic<int>* ready) {
  volatile char pad[480];
  pad[0] = static_cast<char>(depth);
  if (depth > 0) {
    KeptDeepOnStack(depth - 1, ready);
    pad[1] = pad[0];
    return;
  }
  void* volatile p = AllocateZeroed(448);
  hgprog::ScrubStack();
  ready->store(1);
  Use(&p);
  BlockForever();
}

SITE void* DeepStackThread(void* ready) {
  KeptDeepOnStack(199, static_cast<std::atomic<int>*>(ready));
  return nullptr;
}

// --- registers ----------------------------------------------------------------------------------

extern "C" {
__attribute__((used)) volatile int g_spin_ready = 0;
__attribute__((used)) volatile int g_spin_stop = 0;  // never set: the spinner dies at exit
}

SITE void* KeptInRegisterR12() {
  return AllocateZeroed(416);
}

SITE void* KeptInRegisterXmm7() {
  return AllocateZeroed(432);
}

// Clears the caller-saved general registers except rax (the caller clears it), the xmm registers
// listed in `xmm_clear`, and 64 KiB of dead stack below rsp (where the allocation left copies),
// without a call (a callee could save r12 on the stack).
#define HG_CLEAR_SCRATCH(xmm_clear) \
  "xor %ecx, %ecx\n"                \
  "xor %edx, %edx\n"                \
  "xor %esi, %esi\n"                \
  "xor %edi, %edi\n"                \
  "xor %r8d, %r8d\n"                \
  "xor %r9d, %r9d\n"                \
  "xor %r10d, %r10d\n"              \
  "xor %r11d, %r11d\n" xmm_clear    \
  "lea -65536(%rsp), %rdi\n"        \
  "10:\n"                           \
  "movq $0, (%rdi)\n"               \
  "add $8, %rdi\n"                  \
  "cmp %rsp, %rdi\n"                \
  "jb 10b\n"                        \
  "xor %edi, %edi\n"

#define HG_PXOR(n) "pxor %xmm" #n ", %xmm" #n "\n"
#define HG_PXOR_0_TO_6 HG_PXOR(0) HG_PXOR(1) HG_PXOR(2) HG_PXOR(3) HG_PXOR(4) HG_PXOR(5) HG_PXOR(6)
#define HG_PXOR_8_TO_15 \
  HG_PXOR(8) HG_PXOR(9) HG_PXOR(10) HG_PXOR(11) HG_PXOR(12) HG_PXOR(13) HG_PXOR(14) HG_PXOR(15)

#define HG_SPIN                   \
  "movl $1, g_spin_ready(%rip)\n" \
  "20:\n"                         \
  "pause\n"                       \
  "cmpl $0, g_spin_stop(%rip)\n"  \
  "je 20b\n"

// Thread bodies: the pointer returned by the allocation site goes to r12 (resp. xmm7) and
// nowhere else; then spin until the process exits.
extern "C" __attribute__((naked, used)) void* SpinWithR12(void*) {
  asm("push %r12\n"
      "call KeptInRegisterR12\n"
      "mov %rax, %r12\n"
      "xor %eax, %eax\n" HG_CLEAR_SCRATCH(HG_PXOR_0_TO_6 HG_PXOR(7) HG_PXOR_8_TO_15) HG_SPIN
      "xor %r12d, %r12d\n"
      "pop %r12\n"
      "xor %eax, %eax\n"
      "ret\n");
}

extern "C" __attribute__((naked, used)) void* SpinWithXmm7(void*) {
  asm("push %r12\n"
      "call KeptInRegisterXmm7\n"
      "movq %rax, %xmm7\n"
      "xor %eax, %eax\n" HG_CLEAR_SCRATCH(HG_PXOR_0_TO_6 HG_PXOR_8_TO_15) HG_SPIN
      "pxor %xmm7, %xmm7\n"
      "pop %r12\n"
      "xor %eax, %eax\n"
      "ret\n");
}

SITE void StartSpinner(void* (*body)(void*)) {
  pthread_t thread;
  if (pthread_create(&thread, nullptr, body, nullptr) != 0) abort();
  pthread_detach(thread);
  while (g_spin_ready == 0) usleep(1000);
}

// ------------------------------------------------------------------------------------------------
// Interior pointers, mappings.

char* volatile g_interior;

SITE void KeptByInteriorPointer() {
  g_interior = static_cast<char*>(AllocateZeroed(464)) + 232;
}

char* volatile g_end;

SITE void* KeptByEndPointer() {
  return AllocateZeroed(1000);
}

SITE void* LeakAfterEndPointer() {
  return AllocateZeroed(1000);
}

// Aborts if the two blocks are not neighbours (the second starts one glibc chunk after the first:
// 1008 bytes plain, 1024 under heapgraph's recorder, whose tag takes the 4 bytes past the block),
// which would make the case prove nothing about the next block.
SITE void RunEndPointer() {
  char* kept = static_cast<char*>(KeptByEndPointer());
  char* after = static_cast<char*>(LeakAfterEndPointer());
  const size_t chunk = reinterpret_cast<const size_t*>(kept)[-1] & ~size_t{7};
  if (after != kept + chunk) {
    fprintf(stderr, "leak_traps: end_pointer: the blocks are not neighbours\n");
    abort();
  }
  g_end = kept + 1000;
  Use(after);
}

SITE void* MapRootRegion() {
  void* region = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) abort();
  return region;
}

// The mapping's own address stays in a global: the test is about the mapping's contents being a
// root, not about whether an unreferenced mapping is itself a leak.
void* volatile g_mmap_region;

SITE void KeptInMmap() {
  void* volatile* region = static_cast<void* volatile*>(MapRootRegion());
  region[17] = AllocateZeroed(480);
  g_mmap_region = const_cast<void**>(region);
}

struct WithDtor {
  ~WithDtor() { ++destroyed; }
  uint64_t words[3] = {};  // 24 bytes; new WithDtor[5] asks for 8 + 120 = 128
  static inline int destroyed = 0;
};

WithDtor* volatile g_cookie_array;

SITE void KeptViaArrayCookie() {
  g_cookie_array = new WithDtor[5];
}

struct BaseA {
  virtual ~BaseA() = default;
  uint64_t a[5] = {};
};
struct BaseB {
  virtual ~BaseB() = default;
  uint64_t b[5] = {};
};
struct Derived : BaseA, BaseB {
  uint64_t d[4] = {};  // 48 + 48 + 32 = 128
};

BaseB* volatile g_second_base;

SITE void KeptViaSecondBase() {
  BaseB* b = new Derived();
  if (dynamic_cast<void*>(b) == static_cast<void*>(b)) abort();  // must be interior (+48)
  g_second_base = b;
}

// --- STL ----------------------------------------------------------------------------------------

// Storage for a T that is constructed on demand and never destroyed: its heap memory is still
// reachable from the global when the scan runs after static destructors.
template <class T>
struct NoDestroy {
  alignas(T) unsigned char storage[sizeof(T)];
  T& Get() { return *std::launder(reinterpret_cast<T*>(storage)); }
  T& Construct() { return *new (storage) T(); }
};

struct Blob {
  uint64_t words[9] = {};
};

NoDestroy<std::map<std::string, std::vector<std::string>>> g_map;
NoDestroy<std::unordered_map<std::string, std::string>> g_unordered;
NoDestroy<std::list<std::string>> g_list;
NoDestroy<std::deque<std::string>> g_deque;
NoDestroy<std::shared_ptr<Blob>> g_shared;

namespace {

// Long enough (> 15 characters) to live on the heap, not in the small-string buffer.
std::string LongString(const char* kind, int i, int j) {
  char buffer[96];
  snprintf(buffer, sizeof(buffer), "heapgraph-kept-%s-%04d-%04d-padding-padding", kind, i, j);
  return buffer;
}

}  // namespace

SITE void KeptInStlContainers() {
  auto& map = g_map.Construct();
  for (int i = 0; i < 20; ++i) {
    std::vector<std::string>& values = map[LongString("key", i, 0)];
    for (int j = 0; j < 5; ++j) values.push_back(LongString("value", i, j));
  }
  auto& unordered = g_unordered.Construct();
  for (int i = 0; i < 40; ++i) unordered[LongString("ukey", i, 0)] = LongString("uvalue", i, 1);
  auto& list = g_list.Construct();
  for (int i = 0; i < 10; ++i) list.push_back(LongString("list", i, 0));
  auto& deque = g_deque.Construct();
  for (int i = 0; i < 100; ++i) deque.push_back(LongString("deque", i, 0));
  g_shared.Construct() = std::make_shared<Blob>();
}

// ------------------------------------------------------------------------------------------------

namespace {

std::atomic<int> g_tls_thread_ready{0};
std::atomic<int> g_deep_ready{0};

void RunTlsThread() {
  StartThread(KeptInThreadTls, &g_tls_thread_ready);
}
void RunDeepStack() {
  StartThread(DeepStackThread, &g_deep_ready);
}
void RunRegisterR12() {
  StartSpinner(SpinWithR12);
}
void RunRegisterXmm7() {
  StartSpinner(SpinWithXmm7);
}

struct Case {
  const char* name;
  void (*run)();
  bool in_all;
};

const Case kCases[] = {
    {"global", KeptInGlobal, true},
    {"bss", KeptInBss, true},
    {"static_local", KeptInStaticLocal, true},
    {"tls_main", KeptInMainTls, true},
    {"tls_thread", RunTlsThread, true},
    {"dlopen_tls", KeptInDlopenTls, true},
    {"pthread_key", KeptInPthreadKey, true},
    {"deep_stack", RunDeepStack, true},
    {"interior", KeptByInteriorPointer, true},
    {"mmap", KeptInMmap, true},
    {"stl", KeptInStlContainers, true},
    {"array_cookie", KeptViaArrayCookie, true},
    {"second_base", KeptViaSecondBase, true},
    {"end_pointer", RunEndPointer, false},
    {"register_r12", RunRegisterR12, false},
    {"register_xmm7", RunRegisterXmm7, false},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: leak_traps CASE | all | clean [STATUS]\n");
    return 64;
  }
  const char* name = argv[1];
  bool clean = strcmp(name, "clean") == 0;
  bool all = clean || strcmp(name, "all") == 0;
  bool known = all;
  for (const Case& c : kCases) {
    if ((all && c.in_all) || strcmp(name, c.name) == 0) {
      c.run();
      hgprog::ScrubStack();
      known = true;
    }
  }
  if (!known) {
    fprintf(stderr, "leak_traps: unknown case %s\n", name);
    return 64;
  }
  if (clean) return argc > 2 ? atoi(argv[2]) : 0;
  LeakControl();
  hgprog::ScrubStack();
  return 0;
}
