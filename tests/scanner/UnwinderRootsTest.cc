// tests/scanner: libunwind's per-thread trace caches are no leak-scan roots, and the program's own
// mappings still are, in a real program (tests/programs/unwinder_roots, linked with
// libheapgraph.so): leaks found exactly, no kept block reported, the caches' bytes out of the
// roots (and out of the snapshot's copy, but back in a fork() child's after the check), and a
// cache's address reused by the program after its thread exited scanned again.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kUnwinderChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/unwinder_roots";

struct UnwinderOutcome {
  int status = -1;
  std::string out;
  int ok = -1;
  size_t leaked = 0, kept_leaked = 0, ranges = 0;
  unsigned long long unwinder_bytes = 0, root_bytes = 0;
};

UnwinderOutcome RunUnwinderChild(const std::string& args) {
  char pattern[] = "/tmp/heapgraph-unwinder-roots-XXXXXX";
  std::string root = mkdtemp(pattern);
  UnwinderOutcome o;
  o.status = heapgraph::shell::RunShellCommand(
      // libunwind's caches exist only where libunwind unwinds: every stack with unwind_rules=0
      // (the rule walk's own table is one registered range, whatever the thread count).
      ("HEAPGRAPH_OPTIONS=dir=" + root + ",unwind_rules=0 " + kUnwinderChild + " " + args), &o.out);
  std::filesystem::remove_all(root);
  std::sscanf(o.out.c_str(),
              "ok=%d leaked=%zu kept_leaked=%zu unwinder_ranges=%zu unwinder_bytes=%llu "
              "root_bytes=%llu",
              &o.ok, &o.leaked, &o.kept_leaked, &o.ranges, &o.unwinder_bytes, &o.root_bytes);
  return o;
}

TEST(UnwinderRootsTest, CachesOfManyThreadsAreNoRootsAndLeaksAreExact) {
  constexpr int kThreads = 48;
  UnwinderOutcome o = RunUnwinderChild("threads " + std::to_string(kThreads));
  ASSERT_EQ(o.status, 0) << o.out;
  ASSERT_EQ(o.ok, 1) << o.out;
  EXPECT_EQ(o.out.find("mapped=0"), std::string::npos) << o.out;
  // The check leaves the caches out of its snapshot only: a fork() child after it has them.
  EXPECT_NE(o.out.find("forked=1"), std::string::npos) << o.out;
  EXPECT_EQ(o.leaked, 25u) << o.out;
  // Blocks kept only by a thread's stack, by mmap() memory (main thread and a worker that has a
  // cache) and by syscall(SYS_mmap) memory.
  EXPECT_EQ(o.kept_leaked, 0u) << o.out;
  // One 256 KiB frame table per thread that allocated, the main thread's included.
  EXPECT_GE(o.ranges, static_cast<size_t>(kThreads + 1)) << o.out;
  EXPECT_GE(o.unwinder_bytes, (kThreads + 1) * (256ull << 10)) << o.out;
  // Scanned, they alone would exceed every other root together.
  EXPECT_LT(o.root_bytes, o.unwinder_bytes) << o.out;
}

TEST(UnwinderRootsTest, AnExitedThreadsCacheIsForgottenAndItsAddressScannedWhenReused) {
  UnwinderOutcome o = RunUnwinderChild("reuse");
  ASSERT_EQ(o.status, 0) << o.out;
  ASSERT_EQ(o.ok, 1) << o.out;
  EXPECT_NE(o.out.find("forgotten=1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("reused=1"), std::string::npos) << o.out;
  EXPECT_EQ(o.leaked, 25u) << o.out;
  EXPECT_EQ(o.kept_leaked, 0u) << o.out;  // the block kept from the reused address
}

}  // namespace
