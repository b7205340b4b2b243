// tests/scanner: what ClassifyRoot says of a root word: a register (which one), a thread's stack
// (its thread, SP, and the frame's code address found below the word), its static TLS (inside
// the window the control block's size sets, not the stack frames just below it), a module's
// writable data, other memory (its mapping).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "scanner/RootOrigin.h"

namespace heapgraph::scanner {
namespace {

class RootOriginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    page_ = static_cast<uint64_t*>(
        mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(page_, MAP_FAILED);
    char line[128];
    snprintf(line, sizeof(line), "%lx-%lx rw-p 00000000 00:00 0\n",
             static_cast<unsigned long>(Begin()), static_cast<unsigned long>(Begin() + kBytes));
    mappings_.ParseText(line);
    thread_.tid = 42;
    thread_.stack_pointer = Begin() + 0x100;
    thread_.regs[roots::ThreadInfo::kStackPointer] = thread_.stack_pointer;
    thread_.regs[roots::ThreadInfo::kInstructionPointer] = kCode + 0x10;
#if defined(__x86_64__)
    thread_.regs[roots::ThreadInfo::kFsBase] = Begin() + kBytes - 0x400;
#endif
    roots_.Compute(mappings_, {&thread_, 1}, index_, 0, {}, 0);
    modules_.Add(kCode, kCode + 0x1000, types::SegmentKind::kCode, "/lib/app");
    modules_.Add(kData, kData + 0x1000, types::SegmentKind::kWritable, "/lib/app");
  }
  void TearDown() override {
    munmap(page_, kBytes);
  }
  uint64_t Begin() const {
    return reinterpret_cast<uint64_t>(page_);
  }
  RootContext Context(uint64_t tls_size, uint64_t tcb_size) {
    return {roots_, {&thread_, 1}, tls_size, tcb_size, &modules_, &mappings_};
  }
  RetentionPaths::Root InRange(uint64_t address) {
    for (uint32_t i = 0; i < roots_.ranges().size(); ++i) {
      const RootRange& r = roots_.ranges()[i];
      if (address >= r.begin && address < r.end) return {address, i, RetentionPaths::kNone, 0};
    }
    ADD_FAILURE() << "no root range holds " << address;
    return {};
  }

  static constexpr size_t kBytes = 16 * 4096;
  static constexpr uint64_t kCode = 0x10000000, kData = 0x20000000;
  uint64_t* page_ = nullptr;
  roots::ProcessMappings mappings_;
  roots::ThreadInfo thread_;
  BlockIndex index_{{}};
  RootRanges roots_;
  types::ModuleSegments modules_;
};

TEST_F(RootOriginTest, ARegisterIsNamedByItsIndex) {
  RootOrigin o = ClassifyRoot({0, RetentionPaths::kNone, 0, 3}, Context(0, 0));
  EXPECT_EQ(o.kind, RootKind::kRegisters);
  EXPECT_EQ(o.thread, 42);
  EXPECT_EQ(o.reg, 3u);
}

TEST_F(RootOriginTest, AStackWordNamesItsThreadAndTheCodeAddressBelowIt) {
  ASSERT_FALSE(roots_.ranges().empty());
  ASSERT_TRUE(roots_.ranges()[0].thread_stack);
  page_[0x300 / 8] = kCode + 0x42;  // a return address, below the word at 0x400
  uint64_t word = Begin() + 0x400;
  RootOrigin o = ClassifyRoot(InRange(word), Context(0, 0), /*describe_frame=*/true);
  EXPECT_EQ(o.kind, RootKind::kStack);
  EXPECT_EQ(o.thread, 42);
  EXPECT_EQ(o.stack_pointer, thread_.stack_pointer);
  EXPECT_EQ(o.frame_pc, kCode + 0x42);
  EXPECT_EQ(o.region_begin, Begin());
  // Nothing below the word down to SP: the thread's instruction pointer.
  o = ClassifyRoot(InRange(Begin() + 0x200), Context(0, 0), true);
  EXPECT_EQ(o.frame_pc, kCode + 0x10);
  // Without describe_frame, no frame.
  EXPECT_EQ(ClassifyRoot(InRange(word), Context(0, 0)).frame_pc, 0u);
}

#if defined(__x86_64__)
TEST_F(RootOriginTest, StaticTlsIsTheWindowAroundTheThreadPointer) {
  uint64_t tp = thread_.regs[roots::ThreadInfo::kFsBase];
  // TLS blocks 0x600 bytes below tp, a control block 0x300 above it.
  EXPECT_EQ(ClassifyRoot(InRange(tp - 0x600), Context(0x900, 0x300)).kind, RootKind::kTls);
  EXPECT_EQ(ClassifyRoot(InRange(tp + 0x2f8), Context(0x900, 0x300)).kind, RootKind::kTls);
  // The first frames of the stack, just below the TLS blocks: stack, not TLS.
  RootOrigin below = ClassifyRoot(InRange(tp - 0x608), Context(0x900, 0x300));
  EXPECT_EQ(below.kind, RootKind::kStack);
  // Without the control block's size the window is the whole size on both sides.
  EXPECT_EQ(ClassifyRoot(InRange(tp - 0x608), Context(0x900, 0)).kind, RootKind::kTls);
}
#endif

TEST_F(RootOriginTest, OtherMemoryIsItsMappingAndAModulesDataAGlobal) {
  RootRanges no_stack;  // the same mapping, no thread in it
  no_stack.Compute(mappings_, {}, index_, 0, {}, 0);
  ASSERT_EQ(no_stack.ranges().size(), 1u);
  ASSERT_FALSE(no_stack.ranges()[0].thread_stack);
  RootContext context{no_stack, {}, 0, 0, &modules_, &mappings_};
  RootOrigin o = ClassifyRoot({Begin() + 0x400, 0, RetentionPaths::kNone, 0}, context);
  EXPECT_EQ(o.kind, RootKind::kOther);
  EXPECT_EQ(o.region_begin, Begin());
  EXPECT_EQ(o.region_end, Begin() + kBytes);
  // A word in a module's writable segment (the range index only says it is no stack).
  o = ClassifyRoot({kData + 8, 0, RetentionPaths::kNone, 0}, context);
  EXPECT_EQ(o.kind, RootKind::kGlobal);
  EXPECT_EQ(modules_.modules()[o.module].path, "/lib/app");
}

}  // namespace
}  // namespace heapgraph::scanner
