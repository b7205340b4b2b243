#include "heap/platform/FrameRegisters.h"

#include <cstddef>

// value[r] lies at 8 * r, `known` right after the 17 values.
static_assert(offsetof(heapgraph::FrameRegisters, value) == 0);
static_assert(offsetof(heapgraph::FrameRegisters, known) == 8 * heapgraph::FrameRegisters::kCount);

#if defined(__x86_64__)
// rdi = out. Stores rbx, rbp, r12-r15 as they are (untouched here), rsp as it will be after the
// return, rip = the return address; known = those eight registers.
asm(R"(
  .text
  .globl HeapgraphCaptureCallerRegisters
  .hidden HeapgraphCaptureCallerRegisters
  .type HeapgraphCaptureCallerRegisters, @function
  .p2align 4
HeapgraphCaptureCallerRegisters:
  .cfi_startproc
  movq %rbx, 24(%rdi)
  movq %rbp, 48(%rdi)
  leaq 8(%rsp), %rax
  movq %rax, 56(%rdi)
  movq %r12, 96(%rdi)
  movq %r13, 104(%rdi)
  movq %r14, 112(%rdi)
  movq %r15, 120(%rdi)
  movq (%rsp), %rax
  movq %rax, 128(%rdi)
  movl $0x1f0c8, 136(%rdi)
  xorl %eax, %eax
  ret
  .cfi_endproc
  .size HeapgraphCaptureCallerRegisters, .-HeapgraphCaptureCallerRegisters
)");
// 0x1f0c8: bits 3 (rbx), 6 (rbp), 7 (rsp), 12-15, 16 (rip).
static_assert(((1u << 3) | (1u << 6) | (1u << 7) | (0xfu << 12) | (1u << 16)) == 0x1f0c8);
#else
extern "C" void HeapgraphCaptureCallerRegisters(heapgraph::FrameRegisters* out) {
  out->known = 0;
}
#endif
