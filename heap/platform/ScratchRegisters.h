// heap/platform/: leaving no address of another block in the program's scratch registers. The
// recorder's tree operations read other blocks' slots (their addresses) into the calling thread's
// registers; left there, a later save of the register state (the dynamic linker's
// lazy-binding trampoline saves every vector register on the stack, a signal frame saves them all)
// plants that address in a dead part of the program's stack, where a leak check stopping the
// thread at the wrong moment (a thread inside clone3) reads it and keeps the block alive. Libc
// only; usable inside malloc hooks.
//
// HEAPGRAPH_CLEARS_SCRATCH on a function: the compiler zeroes the call-used general-purpose
// registers when it returns (GCC 11+, Clang 15+: `zero_call_used_regs`; nothing elsewhere).
// ClearVectorScratch(): zeroes xmm0-xmm15 (x86-64; the recorder's own code uses no others: it is
// built for baseline x86-64 and calls no glibc string function on a slot).
#pragma once

#if defined(__has_attribute)
#if __has_attribute(zero_call_used_regs)
#define HEAPGRAPH_CLEARS_SCRATCH __attribute__((zero_call_used_regs("all-gpr")))
#endif
#endif
#ifndef HEAPGRAPH_CLEARS_SCRATCH
#define HEAPGRAPH_CLEARS_SCRATCH
#endif

namespace heapgraph {

inline void ClearVectorScratch() {
#if defined(__x86_64__)
  asm volatile(
      "pxor %%xmm0, %%xmm0\n pxor %%xmm1, %%xmm1\n pxor %%xmm2, %%xmm2\n pxor %%xmm3, %%xmm3\n"
      "pxor %%xmm4, %%xmm4\n pxor %%xmm5, %%xmm5\n pxor %%xmm6, %%xmm6\n pxor %%xmm7, %%xmm7\n"
      "pxor %%xmm8, %%xmm8\n pxor %%xmm9, %%xmm9\n pxor %%xmm10, %%xmm10\n pxor %%xmm11, %%xmm11\n"
      "pxor %%xmm12, %%xmm12\n pxor %%xmm13, %%xmm13\n pxor %%xmm14, %%xmm14\n"
      "pxor %%xmm15, %%xmm15"
      :
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#endif
}

}  // namespace heapgraph
