#include <gtest/gtest.h>
#include <sys/user.h>

#include <cstddef>
#include <type_traits>

#include "roots/ThreadInfo.h"

#if defined(__aarch64__)
#include <asm/ptrace.h>
#endif

namespace heapgraph::roots {
namespace {

#if defined(__x86_64__)
constexpr size_t WordIndex(size_t offset) {
  return offset / sizeof(uint64_t);
}

TEST(ThreadInfoTest, RegisterIndicesMatchUserRegsStruct) {
  static_assert(sizeof(user_regs_struct) == ThreadInfo::kRegisterCount * sizeof(uint64_t));
  EXPECT_EQ(ThreadInfo::kR15, WordIndex(offsetof(user_regs_struct, r15)));
  EXPECT_EQ(ThreadInfo::kR12, WordIndex(offsetof(user_regs_struct, r12)));
  EXPECT_EQ(ThreadInfo::kRbp, WordIndex(offsetof(user_regs_struct, rbp)));
  EXPECT_EQ(ThreadInfo::kRbx, WordIndex(offsetof(user_regs_struct, rbx)));
  EXPECT_EQ(ThreadInfo::kRax, WordIndex(offsetof(user_regs_struct, rax)));
  EXPECT_EQ(ThreadInfo::kRdi, WordIndex(offsetof(user_regs_struct, rdi)));
  EXPECT_EQ(ThreadInfo::kInstructionPointer, WordIndex(offsetof(user_regs_struct, rip)));
  EXPECT_EQ(ThreadInfo::kStackPointer, WordIndex(offsetof(user_regs_struct, rsp)));
  EXPECT_EQ(ThreadInfo::kFsBase, WordIndex(offsetof(user_regs_struct, fs_base)));
  EXPECT_EQ(ThreadInfo::kRedZone, 128u);
}
#elif defined(__aarch64__)
TEST(ThreadInfoTest, RegisterIndicesMatchUserPtRegs) {
  static_assert(sizeof(user_pt_regs) == ThreadInfo::kRegisterCount * sizeof(uint64_t));
  EXPECT_EQ(ThreadInfo::kStackPointer, offsetof(user_pt_regs, sp) / 8);
  EXPECT_EQ(ThreadInfo::kInstructionPointer, offsetof(user_pt_regs, pc) / 8);
}
#endif

TEST(ThreadInfoTest, IsPlainDataThatCopiesWithoutAllocating) {
  static_assert(std::is_trivially_copyable_v<ThreadInfo>);
  static_assert(std::is_trivially_destructible_v<ThreadInfo>);
  ThreadInfo info;
  EXPECT_EQ(info.tid, 0);
  EXPECT_FALSE(info.is_caller);
  EXPECT_EQ(info.pending_signal, 0);
  EXPECT_TRUE(info.vector_bytes.empty());
  for (uint64_t r : info.regs) EXPECT_EQ(r, 0u);
}

}  // namespace
}  // namespace heapgraph::roots
