#include "roots/SelfRegisters.h"

#include <cstring>

#include "roots/RawSyscall.h"
#include "roots/VectorState.h"

namespace heapgraph::roots {
namespace {

#if defined(__x86_64__)
// Order of the words the entry stub stores on its stack for the body.
enum SavedWord {
  kSavedRbx,
  kSavedRbp,
  kSavedR12,
  kSavedR13,
  kSavedR14,
  kSavedR15,
  kSavedRsp,
  kSavedRip,
  kSavedFsBase,
  kSavedCount
};

void StoreGeneralPurpose(const uint64_t* words, ThreadInfo* out) {
  out->regs[ThreadInfo::kRbx] = words[kSavedRbx];
  out->regs[ThreadInfo::kRbp] = words[kSavedRbp];
  out->regs[ThreadInfo::kR12] = words[kSavedR12];
  out->regs[ThreadInfo::kR13] = words[kSavedR13];
  out->regs[ThreadInfo::kR14] = words[kSavedR14];
  out->regs[ThreadInfo::kR15] = words[kSavedR15];
  out->regs[ThreadInfo::kStackPointer] = words[kSavedRsp];
  out->regs[ThreadInfo::kInstructionPointer] = words[kSavedRip];
  out->regs[ThreadInfo::kFsBase] = words[kSavedFsBase];
}

// No vector register is callee-saved on x86-64: across the call into Capture() none holds a
// live value, only what earlier code left (block addresses the allocator or a previous check
// moved through them), which a scan would take for roots. So the caller has no vector state.
size_t SaveVector(std::span<uint8_t>, const uint64_t*) {
  return 0;
}

#elif defined(__aarch64__)
// x19..x28, x29 (fp), x30 (lr), caller SP, return address, tpidr_el0, then q8-q15 at word 16.
enum SavedWord {
  kSavedX19,
  kSavedFp = kSavedX19 + 10,
  kSavedLr,
  kSavedSp,
  kSavedPc,
  kSavedTp,
  kSavedQ8 = 16,
  kSavedCount = kSavedQ8 + 16
};

void StoreGeneralPurpose(const uint64_t* words, ThreadInfo* out) {
  for (int i = 0; i <= 11; ++i) out->regs[19 + i] = words[kSavedX19 + i];
  out->regs[ThreadInfo::kStackPointer] = words[kSavedSp];
  out->regs[ThreadInfo::kInstructionPointer] = words[kSavedPc];
}

// user_fpsimd_state: only d8-d15 (low halves of v8-v15) survive a call; the stub saved q8-q15.
size_t SaveVector(std::span<uint8_t> vector, const uint64_t* words) {
  const size_t size = VectorState::CaptureSize();
  if (vector.size() < size) return 0;
  std::memset(vector.data(), 0, size);
  std::memcpy(vector.data() + 8 * 16, words + kSavedQ8, 8 * 16);
  return size;
}
#endif

}  // namespace

// Called by the entry stub below with the registers it saved before anything could touch them.
extern "C" __attribute__((visibility("hidden"), used)) void heapgraph_roots_self_registers_body(
    ThreadInfo* out, uint8_t* vector_data, size_t vector_size, const uint64_t* words) {
  out->tid = RawSyscall::Gettid();
  out->is_caller = true;
  out->is_main = out->tid == RawSyscall::Getpid();
  out->pending_signal = 0;
  out->registers_complete = true;
  out->regs.fill(0);
  StoreGeneralPurpose(words, out);
  out->stack_pointer = static_cast<uintptr_t>(out->regs[ThreadInfo::kStackPointer]);
  const size_t size = SaveVector(std::span<uint8_t>(vector_data, vector_size), words);
  out->vector_bytes = std::span<const uint8_t>(vector_data, size);
}

// SelfRegisters::Capture is defined right here in assembly, under its Itanium-mangled name, so
// that no compiler-generated code runs before the callee-saved registers are stored: a naked or
// forwarding C++ function does not guarantee that (at -O0, and under ASan, such code uses rbx and
// r12-r15 for its own frame). std::span<uint8_t> is passed by value in two registers (data,
// size), so the arguments arrive as (out, data, size); the stub adds the saved words as the
// fourth argument of the body and keeps the stack 16-byte aligned. A mismatch of the mangled
// name would fail at link time, never silently.

#if defined(__x86_64__)
__asm__(R"(
  .text
  .p2align 4
  .globl _ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE
  .type _ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE, @function
_ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE:
  .cfi_startproc
  subq $72, %rsp              # 9 words; entry rsp was 8 mod 16, so this is 16-aligned
  .cfi_adjust_cfa_offset 72
  movq %rbx, 0(%rsp)
  movq %rbp, 8(%rsp)
  movq %r12, 16(%rsp)
  movq %r13, 24(%rsp)
  movq %r14, 32(%rsp)
  movq %r15, 40(%rsp)
  leaq 80(%rsp), %rax         # the caller's SP once this call has returned
  movq %rax, 48(%rsp)
  movq 72(%rsp), %rax         # return address: the caller's IP
  movq %rax, 56(%rsp)
  movq %fs:0, %rax            # the TCB's self pointer equals fs_base (x86-64 TLS ABI)
  movq %rax, 64(%rsp)
  movq %rsp, %rcx
  call heapgraph_roots_self_registers_body@PLT
  addq $72, %rsp
  .cfi_adjust_cfa_offset -72
  ret
  .cfi_endproc
  .size _ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE, .-_ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE
)");
#elif defined(__aarch64__)
__asm__(R"(
  .text
  .p2align 4
  .globl _ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE
  .type _ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE, %function
_ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE:
  .cfi_startproc
  sub sp, sp, #256
  .cfi_adjust_cfa_offset 256
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  .cfi_rel_offset x30, 88
  add x9, sp, #256
  stp x9, x30, [sp, #96]      // caller SP, return address
  mrs x9, tpidr_el0
  str x9, [sp, #112]
  stp q8, q9, [sp, #128]
  stp q10, q11, [sp, #160]
  stp q12, q13, [sp, #192]
  stp q14, q15, [sp, #224]
  mov x3, sp
  bl heapgraph_roots_self_registers_body
  ldr x30, [sp, #88]
  add sp, sp, #256
  .cfi_adjust_cfa_offset -256
  ret
  .cfi_endproc
  .size _ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE, .-_ZN9heapgraph5roots13SelfRegisters7CaptureEPNS0_10ThreadInfoESt4spanIhLm18446744073709551615EE
)");
#endif

}  // namespace heapgraph::roots
