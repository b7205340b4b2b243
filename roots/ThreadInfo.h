// roots/: what stopping the world records about one thread. Produced by ThreadCapture (ptrace) and
// SignalSuspender (signal fallback) in the same layout, so scanners need not care which ran.
//
// regs has the layout of the kernel's NT_PRSTATUS register set (x86-64: struct user_regs_struct,
// aarch64: struct user_pt_regs); vector_bytes is the raw vector state (x86-64: the XSAVE area in
// standard format as NT_X86_XSTATE returns it; aarch64: struct user_fpsimd_state as NT_PRFPREG
// returns it). Components that the hardware reports as in their initial state are zero, never
// stale, so every byte may be scanned for pointers. VectorState slices it into registers.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace heapgraph::roots {

struct ThreadInfo {
#if defined(__x86_64__)
  // struct user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax
  // rip cs eflags rsp ss fs_base gs_base ds es fs gs.
  static constexpr size_t kRegisterCount = 27;
  static constexpr size_t kR15 = 0, kR14 = 1, kR13 = 2, kR12 = 3, kRbp = 4, kRbx = 5;
  static constexpr size_t kRax = 10, kRdi = 14, kInstructionPointer = 16;
  static constexpr size_t kStackPointer = 19, kFsBase = 21;
  // Bytes below the stack pointer that leaf code may use without moving it (SysV ABI).
  static constexpr uintptr_t kRedZone = 128;
#elif defined(__aarch64__)
  // struct user_pt_regs: x0..x30, sp, pc, pstate.
  static constexpr size_t kRegisterCount = 34;
  static constexpr size_t kFramePointer = 29, kLinkRegister = 30;
  static constexpr size_t kStackPointer = 31, kInstructionPointer = 32;
  static constexpr uintptr_t kRedZone = 0;  // AAPCS64 on Linux has no red zone
#else
#error "roots/ supports x86-64 and aarch64"
#endif

  pid_t tid = 0;
  // The thread that stopped the world. Its registers were taken in-process at the stop, so only
  // the callee-saved ones, SP, IP (and fs_base on x86-64) are meaningful; it keeps running.
  bool is_caller = false;
  // The process's main thread (tid == pid): its own stack is the "[stack]" mapping, whatever
  // its SP (ThreadStacks::OwnStack).
  bool is_main = false;
  // A signal taken from the thread while stopping it; it is delivered again on release.
  int pending_signal = 0;
  // False when only SP and IP are known: the signal fallback met a thread that had the suspend
  // signal blocked while sleeping in a system call (typically a thread inside glibc's exit path)
  // and recorded it from /proc/<pid>/task/<tid>/syscall. Such a thread is not truly suspended:
  // it sleeps, but would run on if woken. It may appear a second time, complete, if it unblocks.
  bool registers_complete = true;
  uintptr_t stack_pointer = 0;
  std::array<uint64_t, kRegisterCount> regs{};
  std::span<const uint8_t> vector_bytes;  // points into the capturing object's storage
};

}  // namespace heapgraph::roots
