// The recorder never waits for the dynamic loader's lock in a hook (issue 12, items 1 and 2), on
// real children under LD_PRELOAD: allocation inside dl_iterate_phdr callbacks while other threads
// meet new stacks (tests/programs/hg_loader_callback.cc), and forked children allocating while
// another parent thread kept the loader busy at the fork (tests/programs/hg_loader_fork.cc). A
// deadlock shows as the child's generous timeout. HEAPGRAPH_LOADER_ROUNDS and
// HEAPGRAPH_LOADER_FORKS make them longer (the `loader_stress` target). And what libheapgraph.so
// makes the loader load into a program that does not use C++, and that it has no dynamic
// initializer to race with the threads its constructor starts.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"
#include "tests/ShellCommand.h"

namespace heapgraph::proctest {
namespace {

const std::string kLoaderLib = ProgramPath("libhg_dl_lib.so");

std::string Count(const char* variable, const char* fallback) {
  const char* value = getenv(variable);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

TEST(RecorderLoaderTest, AllocationInsideDlIteratePhdrCallbacksNeverDeadlocks) {
  const std::string rounds = Count("HEAPGRAPH_LOADER_ROUNDS", "100");
  TempRoot root;
  // 100 rounds take about a second; a deadlocked child is given up after twice 60 s.
  RunResult run = RunToExit(ProgramPath("hg_loader_callback"), {kLoaderLib, rounds},
                            RecordingEnv(root.path(), ""), milliseconds(60000));
  ASSERT_TRUE(run.status.has_value()) << "deadlock: the child did not finish\n" << run.stderr_text;
  ASSERT_TRUE(ExitedZero(run)) << run.stderr_text;
  EXPECT_EQ(FieldOf(run.lines, "rounds"), std::vector<std::string>{rounds});

  // The stack of the block kept inside the callback is complete: through the callback, glibc's
  // dl_iterate_phdr and on to its caller (the unwinder's lookups went through the interposer).
  std::vector<std::string> dirs = root.Entries();
  ASSERT_EQ(dirs.size(), 1u);
  RecordingReader reader(root.path() + "/" + dirs[0]);
  const LiveBlock* kept = FindBlock(reader, ParseNumber(FieldOf(run.lines, "kept").at(0)));
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->size, 4321u);
  EXPECT_TRUE(StackPassesThrough(reader, *kept, RangeOf(run.lines, "HgOnObject")));
  EXPECT_TRUE(StackPassesThrough(reader, *kept, RangeOf(run.lines, "HgLoaderRounds")));
}

TEST(RecorderLoaderTest, ForkedChildrenAllocateWhileAnotherThreadHoldsTheLoaderLock) {
  const std::string forks = Count("HEAPGRAPH_LOADER_FORKS", "20");
  TempRoot root;
  // Each child has 20 s to allocate and exit; after the first that does not, no more are forked.
  RunResult run = RunToExit(ProgramPath("hg_loader_fork"), {kLoaderLib, forks, "20"},
                            RecordingEnv(root.path(), ""), milliseconds(300000));
  ASSERT_TRUE(run.status.has_value()) << run.stderr_text;
  EXPECT_EQ(FieldOf(run.lines, "hung"), std::vector<std::string>{})
      << "a forked child hung in its first allocation";
  EXPECT_EQ(FieldOf(run.lines, "forks"), (std::vector<std::string>{forks, "hung", "0"}));
  EXPECT_TRUE(ExitedZero(run)) << run.stderr_text;
}

// libheapgraph.so carries the little of the C runtime support it uses (128-bit division) instead
// of loading libstdc++ and libgcc_s into every preloaded process: a C program (a shell,
// /bin/true, git, python3) started ≈ 0.5-1 ms later with them (issue 14, short-lived processes).
// The loader's list for /bin/true names neither.
TEST(RecorderLoaderTest, AProgramWithoutCxxGetsNoCxxRuntimeFromTheRecorder) {
  std::string command =
      "LD_TRACE_LOADED_OBJECTS=1 LD_PRELOAD=" + std::string(HEAPGRAPH_PRELOAD) + " /bin/true";
  std::string libraries;
  ASSERT_EQ(shell::RunShellCommand(command, &libraries), 0) << libraries;
  ASSERT_NE(libraries.find("libheapgraph"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libstdc++"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libgcc_s"), std::string::npos) << libraries;
#if defined(__x86_64__)
  // Nor libm: the sampler's one logarithm is the x87's (heap/runtime/AllocationSampler).
  EXPECT_EQ(libraries.find("libm.so"), std::string::npos) << libraries;
#endif
}

// The recorder's constructor(101) starts its session thread before the library's default-priority
// initializers run, so a dynamic initializer of any global in libheapgraph.so races with that
// thread: DumpRetention's g_session was zeroed while the thread read a finished run's session into
// it (the run then read as alive and was never pruned). Every global is constant-initialized.
TEST(RecorderLoaderTest, TheRecorderHasNoDynamicInitializer) {
  std::string symbols;
  ASSERT_EQ(shell::RunShellCommand("nm " + std::string(HEAPGRAPH_PRELOAD), &symbols), 0);
  ASSERT_NE(symbols.find("StartRecorder"), std::string::npos) << "nm found no local symbols";
  EXPECT_EQ(symbols.find("_GLOBAL__sub_I_"), std::string::npos)
      << symbols.substr(symbols.find("_GLOBAL__sub_I_") - 20, 80);
}

}  // namespace
}  // namespace heapgraph::proctest
