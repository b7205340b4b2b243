// tests/heap: DwarfExpression on the expressions .eh_frame holds (glibc's signal frame, a
// realigned stack's CFA, a PLT entry's) and on the machine's edges: unknown registers, reads
// outside the window, stack underflow and overflow, division by zero, branches out of the block,
// unknown operations all fail instead of giving a value.
#include <gtest/gtest.h>

#include <vector>

#include "heap/platform/DwarfExpression.h"

namespace heapgraph {
namespace {

struct Evaluation {
  bool ok = false;
  uintptr_t value = 0;
};

class DwarfExpressionTest : public testing::Test {
 protected:
  DwarfExpressionTest() {
    registers_.known = 0;
    registers_.Set(FrameRegisters::kRsp, reinterpret_cast<uintptr_t>(stack_));
    registers_.Set(FrameRegisters::kRbp, reinterpret_cast<uintptr_t>(stack_ + 4));
    registers_.Set(FrameRegisters::kRip, 0x401003);
    for (int i = 0; i < 8; ++i) stack_[i] = 0x1000 + i;
  }

  Evaluation Run(const std::vector<uint8_t>& code, uintptr_t initial = 0, bool push = false) {
    Evaluation e;
    const auto low = reinterpret_cast<uintptr_t>(stack_);
    e.ok = DwarfExpression::Evaluate(code.data(), code.data() + code.size(), registers_, initial,
                                     push, {low, low + sizeof(stack_)}, &e.value);
    return e;
  }

  uintptr_t stack_[8];
  FrameRegisters registers_;
};

TEST_F(DwarfExpressionTest, LiteralsConstantsAndArithmetic) {
  EXPECT_EQ(Run({0x35, 0x33, 0x1c}).value, 2u);                       // lit5 lit3 minus
  EXPECT_EQ(Run({0x10, 0x80, 0x01, 0x23, 0x05}).value, 133u);         // constu 128, plus_uconst 5
  EXPECT_EQ(Run({0x11, 0x7f, 0x31, 0x22}).value, 0u);                 // consts -1, lit1, plus
  EXPECT_EQ(Run({0x0c, 0x78, 0x56, 0x34, 0x12}).value, 0x12345678u);  // const4u
  EXPECT_EQ(Run({0x38, 0x33, 0x24}).value, 64u);                      // lit8 lit3 shl
  EXPECT_EQ(Run({0x3a, 0x33, 0x1b}).value, 3u);                       // lit10 lit3 div
  EXPECT_EQ(Run({0x3a, 0x33, 0x1d}).value, 1u);                       // lit10 lit3 mod
  EXPECT_EQ(Run({0x31, 0x32, 0x16, 0x1c}).value, 1u);                 // lit1 lit2 swap minus
  EXPECT_EQ(Run({0x31, 0x32, 0x33, 0x17, 0x13, 0x13}).value, 3u);  // lit1 lit2 lit3 rot drop drop
  EXPECT_EQ(Run({0x37}, 100, true).value, 7u);                     // the initial value is below
  EXPECT_EQ(Run({0x23, 0x10}, 100, true).value, 116u);  // plus_uconst on the initial value
}

TEST_F(DwarfExpressionTest, RegistersAndReadsInsideTheWindow) {
  const auto rsp = reinterpret_cast<uintptr_t>(stack_);
  EXPECT_EQ(Run({0x77, 0x08}).value, rsp + 8);                  // breg7 8
  EXPECT_EQ(Run({0x77, 0x10, 0x06}).value, 0x1002u);            // breg7 16, deref
  EXPECT_EQ(Run({0x76, 0x78, 0x06}).value, 0x1003u);            // breg6 -8, deref (realigned CFA)
  EXPECT_EQ(Run({0x92, 0x07, 0x08, 0x94, 0x01}).value, 0x01u);  // bregx 7 8, deref_size 1
}

// A PLT entry's CFA: rsp + 8, plus 8 more once rip is past the push (offset 11 of the entry).
TEST_F(DwarfExpressionTest, APltEntrysCfa) {
  const std::vector<uint8_t> plt = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
                                    0x3b, 0x2a, 0x33, 0x24, 0x22};
  const auto rsp = reinterpret_cast<uintptr_t>(stack_);
  registers_.Set(FrameRegisters::kRip, 0x401003);
  EXPECT_EQ(Run(plt).value, rsp + 8);
  registers_.Set(FrameRegisters::kRip, 0x40100c);
  EXPECT_EQ(Run(plt).value, rsp + 16);
}

TEST_F(DwarfExpressionTest, BranchesAndComparisons) {
  // lit1 bra +1 lit7 lit9: the branch skips lit7.
  EXPECT_EQ(Run({0x31, 0x28, 0x01, 0x00, 0x37, 0x39}).value, 9u);
  // lit0 bra +1 lit7: not taken.
  EXPECT_EQ(Run({0x30, 0x28, 0x01, 0x00, 0x37}).value, 7u);
  EXPECT_EQ(Run({0x32, 0x33, 0x2d}).value, 1u);              // 2 < 3
  EXPECT_EQ(Run({0x2f, 0x01, 0x00, 0x00, 0x35}).value, 5u);  // skip over a byte
}

TEST_F(DwarfExpressionTest, FailuresGiveNoValue) {
  const auto rsp = reinterpret_cast<uintptr_t>(stack_);
  EXPECT_FALSE(Run({}).ok);                        // empty stack at the end
  EXPECT_FALSE(Run({0x1c}).ok);                    // minus on an empty stack
  EXPECT_FALSE(Run({0x73, 0x00}).ok);              // breg3: rbx not known
  EXPECT_FALSE(Run({0x77, 0xc0, 0x00, 0x06}).ok);  // deref past the window
  EXPECT_FALSE(Run({0x77, 0x7f, 0x06}).ok);        // deref below it
  EXPECT_FALSE(Run({0x35, 0x30, 0x1b}).ok);        // division by zero
  EXPECT_FALSE(Run({0x2f, 0x40, 0x00}).ok);        // skip out of the block
  EXPECT_FALSE(Run({0x31, 0x28, 0xf0, 0xff}).ok);  // branch before it
  EXPECT_FALSE(Run({0x50}).ok);                    // DW_OP_reg0: a location, not a value
  EXPECT_FALSE(Run({0xe0}).ok);                    // a vendor operation
  EXPECT_FALSE(Run({0x0c, 0x01}).ok);              // const4u cut short
  EXPECT_FALSE(Run({0x2f, 0xfd, 0xff}).ok);        // skip -3: an endless loop, stopped
  std::vector<uint8_t> deep(DwarfExpression::kMaxStack + 1, 0x31);
  EXPECT_FALSE(Run(deep).ok);
  EXPECT_TRUE(Run(std::vector<uint8_t>(DwarfExpression::kMaxStack, 0x31)).ok);
  (void)rsp;
}

}  // namespace
}  // namespace heapgraph
