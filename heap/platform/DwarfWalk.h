// heap/platform/: the complete x86-64 unwinder, uncached, for the stacks the recorder's cached rule
// walk (heap/runtime/StackCapture) cannot describe and for ExitCaller. Each frame steps by the
// complete rule of its FDE (EhFrameRules::Step: any register rule, CFA and register expressions,
// glibc's signal frame, after which the interrupted frame is looked up at its exact instruction
// and the walk may continue on another stack, e.g. from an alternate signal stack). Code without
// an FDE (JIT code, crtstuff's) steps by its frame pointer when rbp is not 0, as libunwind does,
// the two words at rbp read with process_vm_readv so that a wrong rbp ends the walk instead of
// faulting; rbp == 0 there ends the walk. The walk ends at an outermost frame (return address
// undefined), at a frame that does not climb the stack (its CFA not above its stack pointer, or
// farther than kMaxStackSpan above where the walk or the last signal frame left it), and at any
// step that fails. Every other read lies in that window (for a frame a signal interrupted, from
// the 128-byte red zone below its stack pointer on: in an epilogue its rules still name the slots
// of registers it already popped). No allocation, no lock, no signal mask
// change: usable inside malloc hooks and signal handlers. Each step searches .eh_frame_hdr and
// runs the FDE's instructions again (no cache).
#pragma once

#include <cstdint>

#include "heap/platform/FrameRegisters.h"

namespace heapgraph::DwarfWalk {

inline constexpr uintptr_t kMaxStackSpan = uintptr_t{1} << 30;
// x86-64's red zone: a frame interrupted in its epilogue has rules for registers it already
// popped, whose slots lie just below its stack pointer (the kernel leaves these 128 bytes alone
// when it pushes the signal frame).
inline constexpr uintptr_t kRedZone = 128;

// The end of the window a walk reads from stack pointer `sp` on: sp + kMaxStackSpan, or the top
// of the address space.
inline uintptr_t WindowEnd(uintptr_t sp) {
  return sp > ~uintptr_t{0} - kMaxStackSpan ? ~uintptr_t{0} : sp + kMaxStackSpan;
}

// One step through code without an FDE by its frame pointer: [rbp] the caller's rbp, [rbp + 8]
// the return address, the caller's stack pointer rbp + 16; the other registers as they are. False
// (registers unchanged) at rbp == 0 or unknown, when rbp is not above the stack pointer and below
// `high`, or when the two words cannot be read (process_vm_readv fails instead of faulting).
bool FramePointerStep(FrameRegisters* registers, uintptr_t high);

// Where a walk stands besides the frame's registers: whether a signal interrupted the frame (its
// rip is then exact, and its red zone readable) and the end of the window the walk may read.
struct Position {
  // After a signal frame: the walk goes on with the frame the signal interrupted, whose stack
  // pointer is `sp` (maybe on another stack than the handler's).
  void EnterInterrupted(uintptr_t sp) {
    interrupted = true;
    high = WindowEnd(sp);
  }

  bool interrupted = false;
  uintptr_t high = 0;
};

enum class Next : uint8_t {
  kStepped,  // *registers: the caller's
  kEnd,      // the walk ends at this frame: the outermost one, rbp 0 or unreadable in code without
             // an FDE, a CFA that does not climb the stack
  kFailed,   // a rule needs a register not known or a read outside the window, or the FDE cannot
             // be read: the walk ends too (a caller that knew fewer registers may start over)
};

// One frame of the walk by its complete rule (the rest of Walk's contract): `registers` become
// the caller's, `position` follows (a signal frame moves the window to the interrupted stack).
Next StepFrame(FrameRegisters* registers, Position* position);

// From `registers` (a frame's, e.g. HeapgraphCaptureCallerRegisters'): stores each frame's
// instruction pointer in out[i] (the first: registers.ip()) and, when `stack_pointers` is not
// null, its stack pointer in stack_pointers[i]; at most `size` frames. Returns the count.
int Walk(FrameRegisters registers, uintptr_t* out, uintptr_t* stack_pointers, int size);

}  // namespace heapgraph::DwarfWalk
