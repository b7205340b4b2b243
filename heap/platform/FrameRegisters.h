// heap/platform/: the registers of one stack frame, as the complete unwinder (DwarfWalk) steps them
// from frame to frame, numbered as DWARF numbers them on x86-64 (System V psABI): 0-15 rax, rdx,
// rcx, rbx, rsi, rdi, rbp, rsp, r8-r15; 16 the return-address column, which holds the frame's
// instruction pointer. A register is usable only while its bit in `known` is set: a step that
// has no rule for a call-clobbered register, or a frame-pointer step, leaves it unknown, and
// every read of an unknown register fails the step that needs it.
// CaptureCaller fills the set as it is in its caller right after the call returns (the caller's
// stack pointer and return address, the callee-saved registers, which the capture does not
// touch): the first frame of a walk. x86-64 only; elsewhere it knows no register (a walk from it
// stops at once). No allocation, no system call, async-signal-safe.
#pragma once

#include <cstdint>

namespace heapgraph {

struct FrameRegisters {
  static constexpr int kCount = 17;
  static constexpr int kRbp = 6;
  static constexpr int kRsp = 7;
  static constexpr int kRip = 16;

  uintptr_t value[kCount];
  uint32_t known;

  bool Has(uint64_t reg) const { return reg < kCount && (known >> reg & 1) != 0; }
  void Set(uint64_t reg, uintptr_t v) {
    value[reg] = v;
    known |= 1u << reg;
  }
  uintptr_t ip() const { return value[kRip]; }
  uintptr_t sp() const { return value[kRsp]; }
};

}  // namespace heapgraph

// The caller's registers (see above). Defined in assembly (FrameRegisters.cc).
extern "C" void HeapgraphCaptureCallerRegisters(heapgraph::FrameRegisters* out);
