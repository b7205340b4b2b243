// tests/scanner: the unwinder's own memory (the rule walk's table) is no leak-scan root, and the
// program's own mappings still are, in a real program with 48 threads (tests/programs/
// unwinder_roots, linked with libheapgraph.so): leaks found exactly, no kept block reported, the
// table out of the roots (and out of the snapshot's copy, but back in a fork() child's after the
// check). Until session 31 libunwind's per-thread caches were registered too (one 256 KiB table
// per thread); the recorder no longer uses libunwind, so the table is one range, and the threads'
// stack caches (StackCachePool, session 36: one region for every thread) the other.
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
      ("HEAPGRAPH_OPTIONS=dir=" + root + " " + kUnwinderChild + " " + args), &o.out);
  std::filesystem::remove_all(root);
  std::sscanf(o.out.c_str(),
              "ok=%d leaked=%zu kept_leaked=%zu unwinder_ranges=%zu unwinder_bytes=%llu "
              "root_bytes=%llu",
              &o.ok, &o.leaked, &o.kept_leaked, &o.ranges, &o.unwinder_bytes, &o.root_bytes);
  return o;
}

TEST(UnwinderRootsTest, TheRuleTableIsNoRootAndLeaksAreExact) {
  constexpr int kThreads = 48;
  UnwinderOutcome o = RunUnwinderChild("threads " + std::to_string(kThreads));
  ASSERT_EQ(o.status, 0) << o.out;
  ASSERT_EQ(o.ok, 1) << o.out;
  EXPECT_EQ(o.out.find("mapped=0"), std::string::npos) << o.out;
  // The check leaves the table out of its snapshot only: a fork() child after it has it.
  EXPECT_NE(o.out.find("forked=1"), std::string::npos) << o.out;
  EXPECT_EQ(o.leaked, 25u) << o.out;
  // Blocks kept only by a thread's stack, by mmap() memory (main thread and a worker) and by
  // syscall(SYS_mmap) memory.
  EXPECT_EQ(o.kept_leaked, 0u) << o.out;
  // Two ranges whatever the thread count: the rule walk's table (1 MiB of address space) and the
  // stack caches' region (256 MiB).
  EXPECT_EQ(o.ranges, 2u) << o.out;
  EXPECT_GE(o.unwinder_bytes, (1ull << 20) + (256ull << 20)) << o.out;
}

}  // namespace
