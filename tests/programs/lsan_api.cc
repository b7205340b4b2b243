// tests/programs: a LeakSanitizer-annotated program (tests/check/LsanCompatibilityTest), built
// against compiler-rt's own lsan_interface.h when the system has it (HEAPGRAPH_REAL_LSAN_HEADER),
// else against declarations with the same signatures, and linked with libheapgraph.so. Each mode
// leaks blocks of distinct sizes so that the test can find them in the reports:
//   plain 48; ignored 64 holding the only pointer to 32; disabled 80 and 81 (nested); a block of
//   96 held only by a registered root region; leak_one() 111 and leak_two() 222.
// Modes (argv[1]):
//   ignore   plain + ignored, __lsan_do_recoverable_leak_check, prints "recoverable=N", _exit(0)
//   disable  plain + disabled (ScopedDisabler, nested), the same
//   region   only the region's block: checks with the region registered and after unregistering
//            it, prints "registered=N unregistered=M", _exit(0)
//   once     plain, __lsan_do_leak_check (must not return on leaks), then a second call; prints
//            "survived" if it returns
//   two      leak_one + leak_two, returns from main (the at-exit check, under `heapgraph run`)
//   kept     a block of 144 held at a recoverable check (its address then in the repeated checks'
//            kept copy of the live blocks), then forgotten: prints "held=N" (that check's
//            result), then __lsan_do_leak_check (a snapshot process), which must report it
// The program's hooks read the environment: LSAN_TEST_OFF (then __lsan_is_turned_off returns 1),
// LSAN_TEST_DEFAULT_OPTIONS and LSAN_TEST_DEFAULT_SUPPRESSIONS (what the two hooks return).
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#ifdef HEAPGRAPH_REAL_LSAN_HEADER
#include <sanitizer/lsan_interface.h>
#else
extern "C" {
void __lsan_disable(void);
void __lsan_enable(void);
void __lsan_ignore_object(const void* p);
void __lsan_register_root_region(const void* p, size_t size);
void __lsan_unregister_root_region(const void* p, size_t size);
void __lsan_do_leak_check(void);
int __lsan_do_recoverable_leak_check(void);
int __lsan_is_turned_off(void);
const char* __lsan_default_options(void);
const char* __lsan_default_suppressions(void);
}
namespace __lsan {
class ScopedDisabler {
 public:
  ScopedDisabler() { __lsan_disable(); }
  ~ScopedDisabler() { __lsan_enable(); }
};
}  // namespace __lsan
#endif

#include "tests/programs/ProgramSupport.h"

extern "C" __attribute__((used)) int __lsan_is_turned_off(void) {
  return getenv("LSAN_TEST_OFF") != nullptr ? 1 : 0;
}
extern "C" __attribute__((used)) const char* __lsan_default_options(void) {
  return getenv("LSAN_TEST_DEFAULT_OPTIONS");
}
extern "C" __attribute__((used)) const char* __lsan_default_suppressions(void) {
  return getenv("LSAN_TEST_DEFAULT_SUPPRESSIONS");
}

void* volatile g_slot;  // each leak passes through here, then is forgotten

// Outside any namespace, allocating themselves: the rules "^leak_two" and the generator's
// "leak:leak_one()" name them.
__attribute__((noinline)) void leak_one() {
  g_slot = malloc(111);
  g_slot = nullptr;
}
__attribute__((noinline)) void leak_two() {
  g_slot = malloc(222);
  g_slot = nullptr;
}

namespace {

__attribute__((noinline)) void Leak(size_t size) {
  g_slot = malloc(size);
  memset(g_slot, 0, size);
  g_slot = nullptr;
}

__attribute__((noinline)) void LeakIgnored() {
  void** holder = static_cast<void**>(malloc(64));
  memset(holder, 0, 64);
  holder[0] = malloc(32);
  __lsan_ignore_object(holder);
}

__attribute__((noinline)) void LeakDisabled() {
  __lsan::ScopedDisabler outer;
  Leak(80);
  {
    __lsan::ScopedDisabler inner;
    Leak(81);
  }
  Leak(80);
}

__attribute__((noinline)) int RecoverableCheck() {
  hgprog::ScrubStack();
  return __lsan_do_recoverable_leak_check();
}

void* volatile g_held;

int KeptCopy() {
  g_held = malloc(144);
  memset(g_held, 0, 144);
  int held = RecoverableCheck();
  g_held = nullptr;
  printf("held=%d\n", held);
  fflush(stdout);
  hgprog::ScrubStack();
  __lsan_do_leak_check();
  return 0;
}

int Region() {
  void** region = static_cast<void**>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (region == MAP_FAILED) return 2;
  __lsan_register_root_region(region, 4096);
  g_slot = malloc(96);
  region[7] = g_slot;
  g_slot = nullptr;
  int registered = RecoverableCheck();
  __lsan_unregister_root_region(region, 4096);
  int unregistered = RecoverableCheck();
  printf("registered=%d unregistered=%d\n", registered, unregistered);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "two") == 0) {
    leak_one();
    leak_two();
    hgprog::ScrubStack();
    return 0;
  }
  if (strcmp(mode, "kept") == 0) {
    int status = KeptCopy();
    fflush(stdout);
    _exit(status);
  }
  if (strcmp(mode, "region") == 0) {
    int status = Region();
    fflush(stdout);
    _exit(status);
  }
  Leak(48);
  if (strcmp(mode, "once") == 0) {
    hgprog::ScrubStack();
    __lsan_do_leak_check();
    __lsan_do_leak_check();
    printf("survived\n");
    return 0;
  }
  if (strcmp(mode, "ignore") == 0) LeakIgnored();
  if (strcmp(mode, "disable") == 0) LeakDisabled();
  printf("recoverable=%d\n", RecoverableCheck());
  fflush(stdout);
  _exit(0);  // no at-exit check: the report is the recoverable check's
}
