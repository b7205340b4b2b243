// gtest/: heapgraph's GoogleTest integration (docs/gtest.md): a leak check per test. Each test
// (SetUp..TearDown and the fixture's destruction included) is checked for blocks allocated during
// it and leaked at its end (heapgraph_check_leaks_since); a leak fails that test with the leaked
// blocks and their frames, and leaves <dir>/<Suite>.<Test>.{json,txt}. Needs libheapgraph.so
// recording the process (LD_PRELOAD or linked); libheapgraph_scan.so is found as linked or beside
// libheapgraph.so. Environment:
//   HEAPGRAPH_GTEST_DIR        where report files go (default "heapgraph-gtest")
//   HEAPGRAPH_GTEST_RUN_TWICE  1: run the suite twice (--gtest_repeat=2), check the second pass
//   only
//                              (first-use caches filled by the first pass are no leaks)
//   HEAPGRAPH_GTEST_SKIP       ':'-separated suites ("Suite") or tests ("Suite.Test") not checked
//   HEAPGRAPH_GTEST_VERBOSE    1: one line per check on stderr (leaked, live blocks, milliseconds)
//   HEAPGRAPH_GTEST_CHECK      0: heapgraph_gtest_main installs no listener (a baseline run)
#pragma once

namespace heapgraph::gtest {

// Appends the leak-check listener after GoogleTest's printers (its OnTestEnd then runs before
// theirs, so a leak is printed as the test's failure). Call after InitGoogleTest; at most once.
// Returns false (and prints one line) when heapgraph does not record this process.
bool InstallLeakCheck();

// The current test is not checked (HEAPGRAPH_NO_LEAK_CHECK()).
void SkipLeakCheck();
// The current test may leak up to `blocks` blocks (direct + indirect) without failing.
void ExpectLeaks(unsigned long long blocks);

}  // namespace heapgraph::gtest

#define HEAPGRAPH_NO_LEAK_CHECK() ::heapgraph::gtest::SkipLeakCheck()
#define HEAPGRAPH_EXPECT_N_LEAKS(n) ::heapgraph::gtest::ExpectLeaks(n)

// A main() for test programs: InitGoogleTest, InstallLeakCheck, RUN_ALL_TESTS (with the run-twice
// mode applied). Link heapgraph::gtest_main, or call it from a main of your own.
int heapgraph_gtest_main(int argc, char** argv);
