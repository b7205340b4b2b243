// tests/programs: allocations on stacks that are hard to unwind (issue 14, Bad input and safety),
// for StackOracleTest. Usage: hg_unusual_stacks MODE [ARGS]; runs to completion, prints
// "allocations <n>" and mode-specific lines.
//   signal          a second thread sends SIGUSR1 to the main thread while it sorts and copies
//                   (glibc's qsort and memcpy, no frame pointers; no allocation); the handler
//                   allocates, so stacks cross the signal frame at arbitrary instructions
//   signal_altstack the same with the handler on an alternate signal stack (sigaltstack)
//   thread_exit     threads whose exit runs a pthread key destructor and a thread_local object's
//                   destructor, both allocating (stacks through glibc's thread exit)
//   coroutine       functions running on a stack of their own (makecontext/swapcontext) allocate,
//                   switch back and forth, and finish through uc_link
//   jit             code in an anonymous executable mapping (no unwind info, rbp pointing at an
//                   unmapped page) calls a function that allocates: "range jit <begin> <end>",
//                   "range call_jit <begin> <end>" (HgCallJit, which calls the JIT code)
//   jit_fp          the same code keeping a frame-pointer chain
//   fork            while a second thread allocates, forks 4 children one after the other; each
//                   allocates through glibc (strdup) and nested calls, then exits; prints
//                   "child <pid>" for each (exit status 0 only if every child's was)
//   reload_threads A B   reload A B 20 times while a second thread allocates
//   memo_top        the same innermost frames at the same stack pointers under alternating callers
//   reload A B      dlopen A, call HgUnwindAllocate, dlclose; the same with B; prints
//                   "base_a <addr>" and "base_b <addr>" (equal when B took A's place)
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <atomic>

#include "ProgramSupport.h"

namespace {

std::atomic<int> g_allocations{0};

__attribute__((noinline)) void AllocateOne(size_t size) {
  hgprog::Keep(malloc(size));
  g_allocations.fetch_add(1);
}

// ---- signal -------------------------------------------------------------------------------------

constexpr int kSignalAllocations = 3000;
std::atomic<bool> g_stop{false};

void OnSignal(int) {
  AllocateOne(48);
}

void* Sender(void* main_thread) {
  auto target = *static_cast<pthread_t*>(main_thread);
  timespec pause{0, 20000};
  while (!g_stop.load()) {
    pthread_kill(target, SIGUSR1);
    nanosleep(&pause, nullptr);
  }
  return nullptr;
}

int CompareInts(const void* a, const void* b) {
  int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noinline)) void SortAndCopy(int* values, int* copy, int round) {
  for (int i = 0; i < 64; ++i) values[i] = (i * 7919 + round) % 1000;
  qsort(values, 64, sizeof(int), &CompareInts);  // 256 bytes: glibc sorts on its stack
  memcpy(copy, values, 64 * sizeof(int));
}

int SignalMode(bool alternate_stack) {
  static char alternate[64 * 1024];
  if (alternate_stack) {
    stack_t area{};
    area.ss_sp = alternate;
    area.ss_size = sizeof(alternate);
    if (sigaltstack(&area, nullptr) != 0) return 1;
  }
  struct sigaction action {};
  action.sa_handler = &OnSignal;
  action.sa_flags = SA_RESTART | (alternate_stack ? SA_ONSTACK : 0);
  sigaction(SIGUSR1, &action, nullptr);
  pthread_t self = pthread_self(), sender;
  pthread_create(&sender, nullptr, &Sender, &self);
  static int values[64], copy[64];
  for (int round = 0; g_allocations.load() < kSignalAllocations; ++round) {
    SortAndCopy(values, copy, round);
  }
  g_stop.store(true);
  pthread_join(sender, nullptr);
  return 0;
}

// ---- thread exit --------------------------------------------------------------------------------

constexpr int kExitingThreads = 200;
pthread_key_t g_key;

void OnKeyDestroyed(void*) {
  AllocateOne(56);
}

struct AllocatesWhenDestroyed {
  bool used = false;
  ~AllocatesWhenDestroyed() {
    if (used) AllocateOne(72);
  }
};
thread_local AllocatesWhenDestroyed t_object;

void* ExitingThread(void*) {
  pthread_setspecific(g_key, reinterpret_cast<void*>(1));
  t_object.used = true;
  AllocateOne(8);
  return nullptr;
}

int ThreadExitMode() {
  pthread_key_create(&g_key, &OnKeyDestroyed);
  for (int i = 0; i < kExitingThreads; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, &ExitingThread, nullptr) != 0) return 1;
    pthread_join(thread, nullptr);
  }
  return 0;
}

// ---- memo_top -----------------------------------------------------------------------------------

// The same innermost frames at the same stack pointers under alternating callers: a walk's top
// state equals the last walk's, the words above it do not (WalkMemo must check them).
constexpr int kMemoTopRounds = 4000;

__attribute__((noinline)) void MemoTopLeaf(int round) {
  AllocateOne(24 + (round & 7));
}

__attribute__((noinline)) void MemoTopPathA(int round) {
  MemoTopLeaf(round);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void MemoTopPathB(int round) {
  MemoTopLeaf(round);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void MemoTopOuter(int round) {
  if ((round / 3) & 1) {
    MemoTopPathA(round);
  } else {
    MemoTopPathB(round);
  }
  asm volatile("" ::: "memory");
}

int MemoTopMode() {
  for (int round = 0; round < kMemoTopRounds; ++round) MemoTopOuter(round);
  return 0;
}

// ---- coroutine ----------------------------------------------------------------------------------

constexpr int kCoroutines = 300;
ucontext_t g_main_context, g_coroutine_context;

__attribute__((noinline)) void CoroutineNested(int level) {
  AllocateOne(32 + level);
  if (level > 0) CoroutineNested(level - 1);
}

void CoroutineBody() {
  CoroutineNested(3);
  swapcontext(&g_coroutine_context, &g_main_context);  // yield once
  CoroutineNested(2);
}  // returns through uc_link to main

int CoroutineMode() {
  constexpr size_t kStack = 256 * 1024;
  void* stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return 1;
  for (int i = 0; i < kCoroutines; ++i) {
    getcontext(&g_coroutine_context);
    g_coroutine_context.uc_stack.ss_sp = stack;
    g_coroutine_context.uc_stack.ss_size = kStack;
    g_coroutine_context.uc_link = &g_main_context;
    makecontext(&g_coroutine_context, &CoroutineBody, 0);
    swapcontext(&g_main_context, &g_coroutine_context);  // runs to the yield
    AllocateOne(16);                                     // on the main stack between
    swapcontext(&g_main_context, &g_coroutine_context);  // runs to the end
  }
  munmap(stack, kStack);
  return 0;
}

// ---- jit ----------------------------------------------------------------------------------------

constexpr int kJitCalls = 2000;
using Callee = void (*)();
using JitFn = void (*)(Callee);

extern "C" __attribute__((noinline)) void JitCallee() {
  AllocateOne(24);
}

// push rbp; [mov rbp, rsp | movabs rbp, 0x1008]; call rdi; pop rbp; ret
JitFn MakeJit(bool frame_pointer, void** page) {
  unsigned char code[32];
  size_t n = 0;
  code[n++] = 0x55;
  if (frame_pointer) {
    const unsigned char mov[] = {0x48, 0x89, 0xe5};
    memcpy(code + n, mov, sizeof(mov));
    n += sizeof(mov);
  } else {
    const unsigned char movabs[] = {0x48, 0xbd, 0x08, 0x10, 0, 0, 0, 0, 0, 0};
    memcpy(code + n, movabs, sizeof(movabs));
    n += sizeof(movabs);
  }
  const unsigned char tail[] = {0xff, 0xd7, 0x5d, 0xc3};
  memcpy(code + n, tail, sizeof(tail));
  n += sizeof(tail);
  *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (*page == MAP_FAILED) return nullptr;
  memcpy(*page, code, n);
  if (mprotect(*page, 4096, PROT_READ | PROT_EXEC) != 0) return nullptr;
  return reinterpret_cast<JitFn>(*page);
}

}  // namespace

extern "C" __attribute__((noinline, used)) void HgCallJit(JitFn jit) {
  jit(&JitCallee);
  asm volatile("" ::: "memory");  // not a tail call: this frame stays below the JIT frame
}

namespace {

int JitMode(bool frame_pointer) {
  void* page = nullptr;
  JitFn jit = MakeJit(frame_pointer, &page);
  if (jit == nullptr) return 1;
  printf("range jit %#jx %#jx\n", static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(page)),
         static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(page) + 4096));
  hgprog::PrintRange("call_jit", reinterpret_cast<void*>(&HgCallJit));
  for (int i = 0; i < kJitCalls; ++i) HgCallJit(jit);
  return 0;
}

// ---- fork ---------------------------------------------------------------------------------------

constexpr int kForkChildren = 4;
constexpr int kChildAllocations = 3000;

__attribute__((noinline)) void ChildNested(int level) {
  if (level > 0) return ChildNested(level - 1);
  hgprog::Keep(strdup("a string duplicated in a forked child"));
  AllocateOne(40);
}

long g_churn_pause_ns = 0;  // between two of Churner's pairs; 0: none

void* Churner(void*) {
  timespec pause{0, g_churn_pause_ns};
  while (!g_stop.load()) {
    free(malloc(64));
    if (g_churn_pause_ns != 0) nanosleep(&pause, nullptr);
  }
  return nullptr;
}

int ForkMode() {
  pthread_t churner;
  pthread_create(&churner, nullptr, &Churner, nullptr);
  int failed = 0;
  for (int c = 0; c < kForkChildren; ++c) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < kChildAllocations / 2; ++i) ChildNested(i % 4);
      _exit(0);
    }
    printf("child %d\n", static_cast<int>(pid));
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  g_stop.store(true);
  pthread_join(churner, nullptr);
  return failed == 0 ? 0 : 1;
}

// ---- reload -------------------------------------------------------------------------------------

constexpr int kReloadCalls = 500;

int LoadAndCall(const char* path, const char* name) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    printf("load_error %s\n", dlerror());
    return 1;
  }
  auto allocate = reinterpret_cast<void (*)(int)>(dlsym(handle, "HgUnwindAllocate"));
  Dl_info info{};
  if (allocate == nullptr || dladdr(reinterpret_cast<void*>(allocate), &info) == 0) return 1;
  hgprog::PrintAddress(name, info.dli_fbase);
  for (int i = 0; i < kReloadCalls; ++i) allocate(i);
  g_allocations.fetch_add(kReloadCalls);
  dlclose(handle);
  return 0;
}

int ReloadMode(const char* a, const char* b) {
  if (LoadAndCall(a, "base_a") != 0) return 1;
  return LoadAndCall(b, "base_b");
}

int ReloadWithThreadMode(const char* a, const char* b) {
  g_churn_pause_ns = 20000;  // the reloading thread's calls are most of the samples
  pthread_t churner;
  pthread_create(&churner, nullptr, &Churner, nullptr);
  int status = 0;
  for (int i = 0; i < 20 && status == 0; ++i) status = ReloadMode(a, b);
  g_stop.store(true);
  pthread_join(churner, nullptr);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc < 2) return 2;
  int status = 2;
  if (strcmp(argv[1], "signal") == 0) status = SignalMode(false);
  if (strcmp(argv[1], "signal_altstack") == 0) status = SignalMode(true);
  if (strcmp(argv[1], "thread_exit") == 0) status = ThreadExitMode();
  if (strcmp(argv[1], "coroutine") == 0) status = CoroutineMode();
  if (strcmp(argv[1], "memo_top") == 0) status = MemoTopMode();
  if (strcmp(argv[1], "jit") == 0) status = JitMode(false);
  if (strcmp(argv[1], "jit_fp") == 0) status = JitMode(true);
  if (strcmp(argv[1], "fork") == 0) status = ForkMode();
  if (strcmp(argv[1], "reload") == 0 && argc == 4) status = ReloadMode(argv[2], argv[3]);
  if (strcmp(argv[1], "reload_threads") == 0 && argc == 4) {
    status = ReloadWithThreadMode(argv[2], argv[3]);
  }
  printf("allocations %d\n", g_allocations.load());
  return status;
}
