#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "roots/CaptureArena.h"
#include "roots/ProcessMappings.h"
#include "roots/SelfRegisters.h"
#include "roots/VectorState.h"

namespace heapgraph::roots {
namespace {

TEST(SelfRegistersTest, RecordsTheCallerWithItsStackAndCode) {
  CaptureArena arena;
  ASSERT_TRUE(arena.Reserve(1, VectorState::CaptureSize()));
  ThreadInfo* self = arena.Claim();
  int local = 0;
  SelfRegisters::Capture(self, arena.VectorBuffer(self));
  EXPECT_EQ(self->tid, static_cast<pid_t>(syscall(SYS_gettid)));
  EXPECT_TRUE(self->is_caller);
  EXPECT_EQ(self->stack_pointer, self->regs[ThreadInfo::kStackPointer]);
  // SP is in Capture's frame, a little below this frame's local.
  const auto local_address = reinterpret_cast<uintptr_t>(&local);
  EXPECT_LT(self->stack_pointer, local_address);
  EXPECT_GT(self->stack_pointer + 64 * 1024, local_address);
  ProcessMappings maps;
  ASSERT_TRUE(maps.Read());
  const ProcessMappings::Mapping* code = maps.Find(self->regs[ThreadInfo::kInstructionPointer]);
  ASSERT_NE(code, nullptr);
  EXPECT_TRUE(code->executable);
#if defined(__x86_64__)
  uint64_t fs_base = 0;
  __asm__("movq %%fs:0, %0" : "=r"(fs_base));
  EXPECT_EQ(self->regs[ThreadInfo::kFsBase], fs_base);
  // No vector register is callee-saved: the caller's hold only stale values, never roots.
  EXPECT_TRUE(self->vector_bytes.empty());
#else
  EXPECT_EQ(self->vector_bytes.size(), VectorState::CaptureSize());
#endif
}

#if defined(__x86_64__)
TEST(SelfRegistersTest, SavesCalleeSavedRegistersAsTheyAreAtTheCall) {
  CaptureArena arena;
  ASSERT_TRUE(arena.Reserve(1, VectorState::CaptureSize()));
  ThreadInfo* self = arena.Claim();
  std::span<uint8_t> buffer = arena.VectorBuffer(self);
  constexpr uint64_t kMagic = 0x5eedbeefcafe0001;
  struct CallArguments {
    ThreadInfo* self;
    uint8_t* data;
    size_t size;
    void (*capture)(ThreadInfo*, std::span<uint8_t>);
    uint64_t magic;
  } arguments{self, buffer.data(), buffer.size(), &SelfRegisters::Capture, kMagic};
  // Call Capture with r12 and r13 holding known values; both are callee-saved, so the call
  // sequence leaves them intact. rbx (callee-saved too) carries the arguments across the call.
  __asm__ volatile(
      "movq 32(%[a]), %%r12\n\t"
      "leaq 1(%%r12), %%r13\n\t"
      "movq 0(%[a]), %%rdi\n\t"
      "movq 8(%[a]), %%rsi\n\t"
      "movq 16(%[a]), %%rdx\n\t"
      "call *24(%[a])\n\t"
      :
      : [a] "b"(&arguments)
      : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "memory", "cc",
        "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  EXPECT_EQ(self->regs[ThreadInfo::kR12], kMagic);
  EXPECT_EQ(self->regs[ThreadInfo::kR13], kMagic + 1);
}
#endif

}  // namespace
}  // namespace heapgraph::roots
