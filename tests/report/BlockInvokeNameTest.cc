// tests/report: BlockInvokeName on the invoke symbols clang 14 gives Blocks in C, C++ and
// Objective-C functions (as in tests/programs/cycle_blocks and cycle_objc_blocks), and on symbols
// that are not a Block's and must come back unchanged.
#include <gtest/gtest.h>

#include "report/BlockInvokeName.h"

namespace heapgraph::report {
namespace {

TEST(BlockInvokeName, CFunction) {
  EXPECT_EQ(BlockInvokeName::Readable("__main_block_invoke"), "block in main");
  EXPECT_EQ(BlockInvokeName::Readable("__start_session_block_invoke_2"),
            "block #2 in start_session");
}

TEST(BlockInvokeName, CxxFunctionIsDemangled) {
  EXPECT_EQ(BlockInvokeName::Readable("___ZN11ChatSession5startEv_block_invoke"),
            "block in ChatSession::start()");
  EXPECT_EQ(BlockInvokeName::Readable("___ZN12_GLOBAL__N_113SharedCaptureEv_block_invoke_3"),
            "block #3 in (anonymous namespace)::SharedCapture()");
}

TEST(BlockInvokeName, ObjectiveCMethodKeepsTheRuntimesSpelling) {
  EXPECT_EQ(BlockInvokeName::Readable("__21_i_ChatSession__start_block_invoke"),
            "block in _i_ChatSession__start");
  EXPECT_EQ(BlockInvokeName::Readable("__20-[ChatSession start]_block_invoke_2"),
            "block #2 in -[ChatSession start]");
}

TEST(BlockInvokeName, OtherSymbolsAreUnchanged) {
  for (const char* s :
       {"main", "_ZN11ChatSession5startEv", "__libc_start_main", "_block_invoke", "___block_invoke",
        "__main_block_invoke_x", "__main_block_invoke_", "___Zbogus_block_invoke",
        "__99_i_ChatSession__start_block_invoke", "0x4011a0"}) {
    EXPECT_EQ(BlockInvokeName::Readable(s), s);
  }
}

}  // namespace
}  // namespace heapgraph::report
