#include "heap/runtime/ExitCaller.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "heap/platform/DwarfWalk.h"
#include "heap/platform/EhFrameRules.h"
#include "heap/platform/FrameRegisters.h"

// glibc's (ld.so's) record of the stack pointer at the program's start: the top of the main
// thread's live stack.
extern "C" void* __libc_stack_end;

namespace heapgraph::ExitCaller {
namespace {

struct CodeRange {
  uintptr_t begin = 0, end = 0;
  bool Holds(uintptr_t address) const { return address >= begin && address < end; }
};

// The code of the function at `function`, from its FDE (EhFrameRules: a binary search of
// .eh_frame_hdr, where dladdr would read the object's whole symbol table); empty if unknown.
CodeRange FunctionCode(void* function) {
  CodeRange code;
  if (function == nullptr ||
      !EhFrameRules::FunctionRange(reinterpret_cast<uintptr_t>(function), &code.begin, &code.end)) {
    return {};
  }
  return code;
}

// NoteCall's record: the calling thread and its caller's stack pointer (published by the thread).
std::atomic<pthread_t> noted_thread{0};
std::atomic<uint64_t> noted_stack_pointer{0};

// glibc's exit called from inside glibc (main returned) on the main thread: its call to the exit
// handlers left exactly one return address into exit on the live stack above us (exit runs once;
// nothing else points into its code). That slot plus 8 is exit's stack pointer at the call, and
// the call's rule gives exit's canonical frame address. 0 when not found, or exit's rule there is
// not rsp-based, or `from` may not be on the main thread's stack: another thread, or farther than
// 16 MiB below its top (an alternate signal stack or a coroutine's lies in the heap or among the
// mappings, which Linux keeps at least 128 MiB below the main stack). On the main stack every
// byte from `from` up to the top is mapped.
// Reads the live stack word by word, redzones included: not instrumented by ASan.
__attribute__((no_sanitize("address"))) uint64_t FromReturnAddressInExit(const CodeRange& exit_code,
                                                                         uintptr_t from) {
  const auto top = reinterpret_cast<uintptr_t>(__libc_stack_end);
  if (exit_code.begin == 0 || top == 0 || from >= top || top - from > (uintptr_t{1} << 24) ||
      syscall(SYS_gettid) != getpid()) {
    return 0;
  }
  for (uintptr_t slot = (from + 7) & ~uintptr_t{7}; slot + 8 <= top; slot += 8) {
    const uintptr_t word = *reinterpret_cast<const uintptr_t*>(slot);
    if (!exit_code.Holds(word - 1)) continue;
    const UnwindRule rule = EhFrameRules::Find(word - 1);
    if (rule.kind != UnwindRule::kSimple || rule.cfa_from_rbp) return 0;
    const uintptr_t cfa = slot + 8 + rule.cfa_offset;
    if (cfa > top || cfa < slot + 16) return 0;
    const uintptr_t caller = reinterpret_cast<const uintptr_t*>(cfa)[-1];
    return caller != 0 && !exit_code.Holds(caller - 1) ? cfa : 0;
  }
  return 0;
}

// The complete walk (DwarfWalk) up to the first frame above glibc's exit, for what the two ways
// above do not cover (exit called inside glibc on another thread). The recorder's exit() wrapper
// needs no walk: a thread that went through it noted its caller (NoteCall).
__attribute__((noinline)) uint64_t ByWalk(const CodeRange& exit_code) {
  constexpr int kMaxFrames = 256;
  uintptr_t ips[kMaxFrames], sps[kMaxFrames];
  FrameRegisters registers;
  HeapgraphCaptureCallerRegisters(&registers);
  const int n = DwarfWalk::Walk(registers, ips, sps, kMaxFrames);
  bool inside = false;  // the frames walked so far reached exit's
  for (int i = 0; i < n; ++i) {
    // A return address points after the call: ip - 1 lies inside the calling function.
    const bool in_exit = exit_code.Holds(ips[i] - 1);
    if (inside && !in_exit) return sps[i];  // the first frame above exit's: its caller's
    inside = inside || in_exit;
  }
  return 0;
}

}  // namespace

void NoteCall(uint64_t caller_stack_pointer) {
  noted_stack_pointer.store(caller_stack_pointer, std::memory_order_relaxed);
  noted_thread.store(pthread_self(), std::memory_order_release);
}

__attribute__((noinline)) uint64_t StackPointer() {
  // exit() called by the program, through the recorder's wrapper (heap/runtime/SessionInterposer).
  if (noted_thread.load(std::memory_order_acquire) == pthread_self()) {
    return noted_stack_pointer.load(std::memory_order_relaxed);
  }
  // glibc's exit, by its code.
  const CodeRange exit_code = FunctionCode(dlsym(RTLD_NEXT, "exit"));
  if (exit_code.begin == 0) return 0;
  const uint64_t found =
      FromReturnAddressInExit(exit_code, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  return found != 0 ? found : ByWalk(exit_code);
}

}  // namespace heapgraph::ExitCaller
