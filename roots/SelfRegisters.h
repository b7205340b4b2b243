// roots/: the registers of the calling thread, taken in-process in the layout ptrace would give
// (ThreadInfo::regs as NT_PRSTATUS, vector bytes as NT_X86_XSTATE / NT_PRFPREG).
//
// The thread that stops the world cannot ptrace or signal itself. Across the call into Capture()
// only callee-saved registers can hold live values (x86-64: rbx rbp r12-r15; aarch64: x19-x29
// and the low halves of v8-v15), so those, SP and IP at the call, and the thread pointer are
// recorded; every other general-purpose register reads as 0. Capture() is an assembly stub that
// stores them before any compiler-generated code can reuse one. Allocation-free.
#pragma once

#include <cstdint>
#include <span>

#include "roots/ThreadInfo.h"

namespace heapgraph::roots {

namespace SelfRegisters {

// Fills `out` (tid, is_caller, is_main, regs, stack_pointer) and saves the callee-saved vector
// state into `vector`, pointing out->vector_bytes at the bytes written: on aarch64 d8-d15 (the
// stub's q8-q15); on x86-64 nothing (vector_bytes empty: no vector register survives a call, so
// what they hold is stale). `vector` should be 64-byte aligned and VectorState::CaptureSize()
// long; if it is not, vector_bytes is left empty.
void Capture(ThreadInfo* out, std::span<uint8_t> vector);

}  // namespace SelfRegisters

}  // namespace heapgraph::roots
