// RunRoot's marker of a run in progress: made with this process's pid and start ticks, removed
// when the run ends; a marker whose process is gone is stale and removed by the next BusyTags.
// The pruning itself is DumpRetention's (tests/heap/session/DumpRetentionTest) and a real run's
// (LeakCheckTriggerTest.ARunStartingBesideAnotherPrunesNoneOfItsProcesses).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "heap/platform/ProcessStartTicks.h"
#include "tests/TempDir.h"
#include "tools/RunRoot.h"

namespace heapgraph::tools {
namespace {

std::string Text(const std::string& path) {
  std::ifstream in(path);
  return std::string{std::istreambuf_iterator<char>(in), {}};
}

TEST(RunRootTest, AMarkerNamesThisProcessWhileTheRunLasts) {
  TempDir root;
  {
    RunRoot run(root.path(), 1234);
    EXPECT_EQ(Text(root.Path(".run.1234")),
              std::to_string(getpid()) + " " + std::to_string(ProcessStartTicks::OfSelf()) + "\n");
    EXPECT_EQ(run.BusyTags(), std::vector<uint32_t>{1234});
  }
  EXPECT_FALSE(std::filesystem::exists(root.Path(".run.1234")));
}

TEST(RunRootTest, StaleMarkersAreRemovedAndOtherNamesLeftAlone) {
  TempDir root;
  // This process with another start time: a pid the kernel reused after a killed run.
  std::ofstream(root.Path(".run.7")) << getpid() << " " << ProcessStartTicks::OfSelf() + 1 << "\n";
  std::ofstream(root.Path(".run.8")) << "garbage\n";
  std::ofstream(root.Path(".run.x9")) << getpid() << " " << ProcessStartTicks::OfSelf() << "\n";
  std::filesystem::create_directory(root.Path(".run.10"));  // not a file: not a marker
  RunRoot run(root.path(), 42);
  EXPECT_EQ(run.BusyTags(), std::vector<uint32_t>{42});
  EXPECT_FALSE(std::filesystem::exists(root.Path(".run.7")));
  EXPECT_FALSE(std::filesystem::exists(root.Path(".run.8")));
  EXPECT_TRUE(std::filesystem::exists(root.Path(".run.x9")));
  EXPECT_TRUE(std::filesystem::exists(root.Path(".run.10")));
}

}  // namespace
}  // namespace heapgraph::tools
