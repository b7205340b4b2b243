// tests/scanner: the recorder's per-thread state (static TLS) and its threads' stack caches are no
// leak-scan root, and the program's thread-locals still are, in a real program
// (tests/programs/recorder_tls_roots, linked with libheapgraph.so): a block whose address is only
// in a thread's recorder state or in the stack caches' region is reported, a block kept only by a
// thread's own __thread variable is not, other leaks are found exactly.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kTlsChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/recorder_tls_roots";

struct TlsOutcome {
  int status = -1;
  std::string out;
  int ok = -1, planted = -1, cache_planted = -1;
  size_t leaked = 0, kept_leaked = 0, planted_leaked = 0, cache_planted_leaked = 0;
  unsigned long long state_bytes = 0, root_bytes = 0;
};

TlsOutcome RunTlsChild(const std::string& args) {
  char pattern[] = "/tmp/heapgraph-recorder-tls-XXXXXX";
  std::string root = mkdtemp(pattern);
  TlsOutcome o;
  o.status = heapgraph::shell::RunShellCommand(
      ("HEAPGRAPH_OPTIONS=dir=" + root + " " + kTlsChild + " " + args), &o.out);
  std::filesystem::remove_all(root);
  std::sscanf(o.out.c_str(),
              "ok=%d leaked=%zu kept_leaked=%zu planted_leaked=%zu planted=%d state_bytes=%llu "
              "root_bytes=%llu cache_planted_leaked=%zu cache_planted=%d",
              &o.ok, &o.leaked, &o.kept_leaked, &o.planted_leaked, &o.planted, &o.state_bytes,
              &o.root_bytes, &o.cache_planted_leaked, &o.cache_planted);
  return o;
}

TEST(RecorderTlsRootsTest, RecorderStateIsNoRootAndProgramThreadLocalsAre) {
  constexpr int kThreads = 32;
  TlsOutcome o = RunTlsChild("threads " + std::to_string(kThreads));
  ASSERT_EQ(o.status, 0) << o.out;
  ASSERT_EQ(o.ok, 1) << o.out;
  // The stack-id cache lies outside the static TLS (a new thread zeroes all of it): under 8 KiB.
  EXPECT_LT(o.state_bytes, 8ull << 10) << o.out;
  ASSERT_EQ(o.planted, kThreads + 1) << o.out;
  ASSERT_EQ(o.cache_planted, kThreads + 1) << o.out;
  EXPECT_EQ(o.leaked, 25u) << o.out;
  EXPECT_EQ(o.kept_leaked, 0u) << o.out;  // each thread's own __thread keeps its block
  EXPECT_EQ(o.planted_leaked, static_cast<size_t>(kThreads + 1)) << o.out;
  EXPECT_EQ(o.cache_planted_leaked, static_cast<size_t>(kThreads + 1)) << o.out;
}

}  // namespace
