// heap/platform/: the x86-64 unwind rule of one code address, read from its module's .eh_frame.
// EhFrameRules::Find(pc) finds the loaded object of `pc` (LoadedObject, lock-free), the FDE that
// covers `pc` through the binary-search table of .eh_frame_hdr, and runs the CIE's and the FDE's
// call-frame instructions up to `pc`. The result says how the caller's frame follows from this
// one, in the few shapes compiled code has:
//   CFA = rsp + offset or rbp + offset; the return address at CFA - 8; rbp either unchanged or
//   saved at CFA + rbp_offset; rsp of the caller = CFA.
// Everything else is kNotSimple: no object, no .eh_frame_hdr or no sorted table, no FDE (JIT
// code; then `no_fde` is set), signal frames (augmentation 'S'; then `signal_frame` is set when
// the FDE's rules take the interrupted frame's rip, rsp and rbp from fixed words above the
// frame's rsp, as glibc's restorer's do: the kernel's ucontext), CFA or register expressions, a
// CFA in another register (realigned stacks), rbp or the return address kept in a register,
// unknown instructions or augmentations, 64-bit DWARF lengths, remember_state nested deeper than
// kMaxRememberedStates.
// Step applies the complete rule at `pc` to a frame's whole register set (FrameRegisters): every
// register rule, CFA and register expressions (DwarfExpression), signal frames. It is what the
// complete unwinder (DwarfWalk) steps by where a kNotSimple rule stops the cached walk; it reads
// the stack only inside the caller's window.
// kEnd is the outermost frame: its return address is undefined (glibc's _start, clone3's child,
// __start_context), where every DWARF unwinder stops.
// `pc` of a frame other than the innermost is its return address - 1 (the call instruction).
// No malloc, no locks, no exceptions, no stdio; reads only the object's mapped .eh_frame_hdr and
// .eh_frame, bounded by its mapping. Safe while the object stays loaded (callers look up return
// addresses of a live stack).
#pragma once

#include <cstdint>

#include "heap/platform/FrameRegisters.h"
#include "heap/platform/StackWindow.h"

namespace heapgraph {

struct UnwindRule {
  enum Kind : uint8_t { kNotSimple = 0, kSimple = 1, kEnd = 2 };
  Kind kind = kNotSimple;
  bool cfa_from_rbp = false;  // CFA = (cfa_from_rbp ? rbp : rsp) + cfa_offset
  bool rbp_saved = false;     // the caller's rbp is at CFA + rbp_offset, else rbp is unchanged
  bool no_fde = false;        // kNotSimple because no loaded object or no FDE covers the address
  // kNotSimple out of a signal frame whose rules read the interrupted frame's rip, rsp and rbp
  // from the words signal_words[0], [1], [2] above the frame's rsp (each < kMaxSignalWord); found
  // by running the FDE's own rules once over marked words (SignalFrameWords in the .cc).
  bool signal_frame = false;
  uint8_t signal_words[3] = {};
  uint32_t cfa_offset = 0;
  int32_t rbp_offset = 0;
};

namespace EhFrameRules {

inline constexpr int kMaxRememberedStates = 8;
// Largest CFA offset a kSimple rule holds (bigger frames are kNotSimple).
inline constexpr uint32_t kMaxCfaOffset = (1u << 20) - 1;
// Deepest saved-rbp slot below the CFA a kSimple rule holds, in bytes.
inline constexpr uint32_t kMaxRbpDepth = 0xffff;
// A signal frame's register words lie below this index above its stack pointer (glibc on x86-64:
// the kernel's ucontext, rbp 15, rsp 20, rip 21).
inline constexpr uint32_t kMaxSignalWord = 128;

UnwindRule Find(uintptr_t pc);
// The code range [*begin, *end) of the FDE that covers `pc`: the function's, or the part of it
// (a .cold split has an FDE of its own); false where Find has no FDE to read (no object, no
// .eh_frame_hdr, JIT code, an FDE or CIE this reader does not handle).
bool FunctionRange(uintptr_t pc, uintptr_t* begin, uintptr_t* end);

enum class Stepped : uint8_t {
  kStepped,      // *registers: the caller's (rip its return address, rsp the CFA)
  kSignalFrame,  // the same, out of a signal frame: the caller was interrupted at rip exactly
  kEnd,          // the outermost frame (its return address is undefined)
  kNoFde,        // no loaded object or no FDE covers `pc`
  kFailed,       // a rule needs a register not known or a read outside the window, or the FDE
                 // or CIE cannot be read
};
// One frame step: `registers` are the frame's, `pc` its lookup address (rip - 1 for a frame that
// called, rip for one a signal interrupted); every memory read lies in `window`.
// *registers changes only when the result is kStepped or kSignalFrame.
Stepped Step(uintptr_t pc, FrameRegisters* registers, StackWindow window);

}  // namespace EhFrameRules

}  // namespace heapgraph
