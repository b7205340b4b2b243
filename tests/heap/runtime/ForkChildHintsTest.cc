// tests/heap: ForkChildHints. Hints come back once each, in the order reported, with their kind;
// a drain takes only the newest ring-full; a second Initialize keeps the page; zero values are
// skipped; nothing is reported before
// StartReporting or without the page; and a real forked child's reports reach its parent, whose
// read position is its own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "heap/runtime/ForkChildHints.h"

namespace heapgraph {
namespace {

using Hint = std::pair<ForkChildHints::Kind, uint64_t>;

std::vector<Hint> DrainAll(ForkChildHints& hints) {
  std::vector<Hint> got;
  hints.Drain([&got](ForkChildHints::Kind kind, uint64_t value) { got.emplace_back(kind, value); });
  return got;
}

TEST(ForkChildHintsTest, HintsAreDrainedOnceInTheOrderReported) {
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  hints.StartReporting();
  ASSERT_TRUE(hints.reporting());
  hints.Report(ForkChildHints::kRule, 0x401234);
  hints.Report(ForkChildHints::kStack, 7);
  hints.Report(ForkChildHints::kRule, 0x7f0000001000);
  EXPECT_EQ(hints.reported(), 3u);
  const std::vector<Hint> expected = {{ForkChildHints::kRule, 0x401234},
                                      {ForkChildHints::kStack, 7},
                                      {ForkChildHints::kRule, 0x7f0000001000}};
  EXPECT_EQ(DrainAll(hints), expected);
  EXPECT_TRUE(DrainAll(hints).empty());
  hints.Report(ForkChildHints::kStack, 9);
  EXPECT_EQ(DrainAll(hints), (std::vector<Hint>{{ForkChildHints::kStack, 9}}));
}

TEST(ForkChildHintsTest, ADrainTakesOnlyTheNewestRingFull) {
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  hints.StartReporting();
  constexpr uint64_t kExtra = 10;
  for (uint64_t i = 1; i <= ForkChildHints::kRing + kExtra; ++i) {
    hints.Report(ForkChildHints::kStack, i);
  }
  std::vector<Hint> got = DrainAll(hints);
  ASSERT_EQ(got.size(), ForkChildHints::kRing);
  EXPECT_EQ(got.front().second, kExtra + 1);
  EXPECT_EQ(got.back().second, ForkChildHints::kRing + kExtra);
}

// The first fork maps the page; every later fork calls Initialize again and keeps it.
TEST(ForkChildHintsTest, InitializeMapsThePageOnce) {
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  hints.StartReporting();
  hints.Report(ForkChildHints::kStack, 5);
  ASSERT_TRUE(hints.Initialize());
  EXPECT_EQ(hints.reported(), 1u);
  EXPECT_EQ(DrainAll(hints), (std::vector<Hint>{{ForkChildHints::kStack, 5}}));
}

TEST(ForkChildHintsTest, ZeroValuesAreSkipped) {
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  hints.StartReporting();
  hints.Report(ForkChildHints::kRule, 0);
  hints.Report(ForkChildHints::kStack, 0);
  hints.Report(ForkChildHints::kStack, 3);
  EXPECT_EQ(DrainAll(hints), (std::vector<Hint>{{ForkChildHints::kStack, 3}}));
}

TEST(ForkChildHintsTest, NothingIsReportedBeforeStartOrWithoutThePage) {
  ForkChildHints unmapped;
  unmapped.StartReporting();
  EXPECT_FALSE(unmapped.reporting());
  EXPECT_EQ(unmapped.reported(), 0u);
  EXPECT_TRUE(DrainAll(unmapped).empty());
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  EXPECT_FALSE(hints.reporting());
  hints.StartReporting();
  hints.StopReporting();
  EXPECT_FALSE(hints.reporting());
}

// The child drains first (its own read position, inherited at the fork, moves; the parent's does
// not), then reports; the parent finds exactly the child's hints.
TEST(ForkChildHintsTest, AForkedChildsReportsReachItsParent) {
  ForkChildHints hints;
  ASSERT_TRUE(hints.Initialize());
  hints.StartReporting();
  hints.Report(ForkChildHints::kRule, 0x1111);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool drained_own = DrainAll(hints).size() == 1;
    hints.Report(ForkChildHints::kRule, 0x2222);
    hints.Report(ForkChildHints::kStack, 42);
    _exit(drained_own ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::vector<Hint> expected = {{ForkChildHints::kRule, 0x1111},
                                      {ForkChildHints::kRule, 0x2222},
                                      {ForkChildHints::kStack, 42}};
  EXPECT_EQ(DrainAll(hints), expected);
}

}  // namespace
}  // namespace heapgraph
