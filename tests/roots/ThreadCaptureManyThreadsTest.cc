// tests/roots: stopping the world in a real process with more threads than the capture's old
// fixed capacity (8,192 slots: every check then failed with "listing /proc/<pid>/task: No buffer
// space available", and the signal fallback with "more threads than max_threads").
// tests/programs/many_threads_check, linked with libheapgraph.so and the scanner, with 10,000
// threads of 64 KiB stacks (HEAPGRAPH_MANY_THREADS overrides it, 20,000 for instance;
// tests/stress/run.sh's `threads` scenario runs the child ten times): the leak check captures every
// thread and reports the planted leaks exactly, and the signal fallback suspends every thread.
// Skipped, with the reason, where the machine cannot run that many threads.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "../ShellCommand.h"

namespace {

const std::string kChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/many_threads_check";

long ThreadCount() {
  const char* text = getenv("HEAPGRAPH_MANY_THREADS");
  return text != nullptr && atol(text) > 0 ? atol(text) : 10000;
}

long ReadNumber(const char* path) {
  std::ifstream in(path);
  long value = -1;
  in >> value;
  return value;
}

// Why this machine cannot run `threads` more threads, or "" if it can as far as we can tell (the
// child reports a pthread_create failure as a skip too).
std::string CannotRun(long threads) {
  const long wanted = threads + 1000;  // the test's own, the build's, the machine's
  rlimit nproc = {};
  if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY &&
      static_cast<long>(nproc.rlim_cur) < wanted) {
    return "ulimit -u is " + std::to_string(nproc.rlim_cur);
  }
  for (const char* path : {"/proc/sys/kernel/threads-max", "/proc/sys/kernel/pid_max"}) {
    const long value = ReadNumber(path);
    if (value >= 0 && value < wanted) return std::string(path) + " is " + std::to_string(value);
  }
  // Two mappings per thread (stack and guard page), more for the few that allocate.
  const long maps = ReadNumber("/proc/sys/vm/max_map_count");
  if (maps >= 0 && maps < 2 * threads + 10000) {
    return "/proc/sys/vm/max_map_count is " + std::to_string(maps);
  }
  return "";
}

struct Outcome {
  std::string skip;  // non-empty: the machine cannot run the threads
  int status = -1;
  std::string out;
  int scan_ok = -1, signals_ok = -1;
  size_t scan_threads = 0, leaked = 0, kept_leaked = 0, other_leaked = 0, signal_threads = 0;
};

// The value after "<key>" on the line starting with `prefix`, or nothing.
template <typename T>
void Scan(const std::string& out, const char* prefix, const char* format, T* value) {
  const size_t line = out.find(prefix);
  if (line != std::string::npos) std::sscanf(out.c_str() + line, format, value);
}

Outcome RunChild(long threads) {
  Outcome o;
  o.skip = CannotRun(threads);
  if (!o.skip.empty()) return o;
  char pattern[] = "/tmp/heapgraph-many-threads-XXXXXX";
  std::string root = mkdtemp(pattern);
  o.status = heapgraph::shell::RunShellCommand(
      "HEAPGRAPH_OPTIONS=dir=" + root + " " + kChild + " " + std::to_string(threads), &o.out);
  std::filesystem::remove_all(root);
  if (const size_t at = o.out.find("skip="); at != std::string::npos) {
    o.skip = o.out.substr(at);
    return o;
  }
  Scan(o.out, "scan ", "scan ok=%d", &o.scan_ok);
  Scan(o.out, "scan ", "scan ok=%*d threads=%zu", &o.scan_threads);
  Scan(o.out, "scan ", "scan ok=%*d threads=%*u leaked=%zu", &o.leaked);
  Scan(o.out, "scan ", "scan ok=%*d threads=%*u leaked=%*u kept_leaked=%zu", &o.kept_leaked);
  Scan(o.out, "scan ", "scan ok=%*d threads=%*u leaked=%*u kept_leaked=%*u other_leaked=%zu",
       &o.other_leaked);
  Scan(o.out, "signals ", "signals ok=%d", &o.signals_ok);
  Scan(o.out, "signals ", "signals ok=%*d threads=%zu", &o.signal_threads);
  return o;
}

// One test (ctest runs each in a process of its own): starting the threads is most of the cost.
TEST(ThreadCaptureManyThreadsTest, CheckAndSignalFallbackCaptureEveryThread) {
  const long threads = ThreadCount();
  const Outcome o = RunChild(threads);
  if (!o.skip.empty()) GTEST_SKIP() << o.skip;
  // The leak check (ptrace): the workers, main, and libheapgraph.so's own threads.
  EXPECT_EQ(o.scan_ok, 1) << o.out;
  EXPECT_GE(o.scan_threads, static_cast<size_t>(threads + 1)) << o.out;
  EXPECT_EQ(o.leaked, 25u) << o.out;
  // Blocks kept by a worker's stack: a worker missed by the capture would have its stack taken
  // for an exited thread's cached one (only its top scanned), and its block reported.
  EXPECT_EQ(o.kept_leaked, 0u) << o.out;
  EXPECT_EQ(o.other_leaked, 0u) << o.out;
  // The signal fallback.
  EXPECT_EQ(o.signals_ok, 1) << o.out;
  EXPECT_GE(o.signal_threads, static_cast<size_t>(threads + 1)) << o.out;
  EXPECT_EQ(o.status, 0) << o.out;
}

}  // namespace
