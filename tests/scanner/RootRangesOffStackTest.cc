// tests/scanner: the main thread's stack stays a root while the main thread runs elsewhere, in a
// real program (tests/programs/off_stack_roots, linked with libheapgraph.so and
// libheapgraph_scan.so): a block kept only by a local of main's frame is not reported when the
// check runs from a sigaltstack signal handler or a swapcontext fiber (on the main thread, or on
// a thread started there while main waits off its stack), with the alternate stack mapped or
// malloc'd; the planted leaks are still reported exactly.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "../ShellCommand.h"

namespace {

const std::string kOffStackChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/off_stack_roots";

struct OffStackOutcome {
  int status = -1;
  std::string out;
  int ok = -1, off_stack = -1;
  unsigned long long direct = 0, indirect = 0, leaked_bytes = 0;
};

OffStackOutcome RunOffStackChild(const std::string& how, const std::string& stack) {
  char pattern[] = "/tmp/heapgraph-off-stack-XXXXXX";
  std::string root = mkdtemp(pattern);
  OffStackOutcome o;
  o.status = heapgraph::shell::RunShellCommand(
      "HEAPGRAPH_OPTIONS=dir=" + root + " " + kOffStackChild + " " + how + " " + stack, &o.out);
  std::filesystem::remove_all(root);
  std::sscanf(o.out.c_str(), "ok=%d off_stack=%d direct=%llu indirect=%llu leaked_bytes=%llu",
              &o.ok, &o.off_stack, &o.direct, &o.indirect, &o.leaked_bytes);
  return o;
}

class RootRangesOffStackTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(RootRangesOffStackTest, MainStackIsScannedAndPlantedLeaksAreExact) {
  const auto& [how, stack] = GetParam();
  OffStackOutcome o = RunOffStackChild(how, stack);
  ASSERT_EQ(o.status, 0) << o.out;
  ASSERT_EQ(o.ok, 1) << o.out;
  ASSERT_EQ(o.off_stack, 1) << o.out;  // the check ran with main away from "[stack]"
  // 3 chains of a 4,242-byte block pointing to a 4,243-byte one; the 5,151-byte block kept by
  // main's frame is not among them.
  EXPECT_EQ(o.direct, 3u) << o.out;
  EXPECT_EQ(o.indirect, 3u) << o.out;
  EXPECT_EQ(o.leaked_bytes, 3u * (4242 + 4243)) << o.out;
}

INSTANTIATE_TEST_SUITE_P(
    AltstackAndFiber, RootRangesOffStackTest,
    ::testing::Combine(::testing::Values("altstack", "altstack_other", "fiber", "fiber_other"),
                       ::testing::Values("mmap", "malloc")),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
