// tests/scanner: BlockCopy, the live blocks copied out of the recorder's tree. A shared copy is
// published to a process forked before the copy was made (as the snapshot process the ptrace
// helper clones while the scanning process still copies): that process waits for it and reads
// every block, or learns that they did not fit. A private copy is kept from one Reserve to the
// next, and a copy of the other kind is not.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "heap/store/LiveAllocationTree.h"
#include "scanner/BlockCopy.h"
#include "tests/TempDir.h"

namespace heapgraph::scanner {
namespace {

std::unique_ptr<LiveAllocationTree> TreeOf(const TempDir& dir, uint64_t blocks) {
  auto tree = std::make_unique<LiveAllocationTree>();
  EXPECT_TRUE(tree->Create(dir.fd(), "heap.tree", 4, 12));
  for (uint64_t i = 0; i < blocks; ++i) {
    EXPECT_TRUE(tree->Insert(BlockRecord{0x100000 + 64 * i, 16 + i % 7, 1, 0}));
  }
  return tree;
}

// Forks a process that waits for `copy`'s publication and exits with 0 when it read `expected`
// blocks (the right addresses), 1 when it read others, 2 when told they did not fit.
pid_t ForkReader(const BlockCopy& copy, uint64_t expected) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  std::span<const LeakedBlock> blocks;
  if (!copy.AwaitPublished(&blocks)) _exit(2);
  std::set<uint64_t> addresses;
  for (const LeakedBlock& b : blocks) addresses.insert(b.address);
  bool right = blocks.size() == expected && addresses.size() == expected &&
               (expected == 0 || (*addresses.begin() == 0x100000 &&
                                  *addresses.rbegin() == 0x100000 + 64 * (expected - 1)));
  _exit(right ? 0 : 1);
}

int ExitCodeOf(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(BlockCopyTest, ASharedCopyMadeAfterTheForkReachesTheForkedProcess) {
  TempDir dir;
  auto tree = TreeOf(dir, 3000);
  BlockCopy copy;
  ASSERT_TRUE(copy.Reserve(tree->LiveCount(), /*shared=*/true));
  EXPECT_TRUE(copy.shared());
  const pid_t reader = ForkReader(copy, 3000);  // forked first, as the snapshot is cloned first
  usleep(20'000);
  ASSERT_TRUE(copy.CopyFrom(*tree));
  copy.Publish();
  EXPECT_EQ(ExitCodeOf(reader), 0);
  ASSERT_EQ(copy.blocks().size(), 3000u);
  // The range a scan leaves out of its roots covers the whole mapping, the blocks inside it.
  const auto [begin, end] = copy.Range();
  EXPECT_EQ(begin % 4096, 0u);
  EXPECT_LT(begin, reinterpret_cast<uint64_t>(copy.blocks().data()));
  EXPECT_LE(reinterpret_cast<uint64_t>(copy.blocks().data() + copy.blocks().size()), end);
  EXPECT_EQ(end % 4096, 0u);
}

TEST(BlockCopyTest, ACopyThatDidNotFitIsPublishedAsSuch) {
  TempDir dir;
  auto tree = TreeOf(dir, 3000);
  BlockCopy copy;
  ASSERT_TRUE(copy.Reserve(10, /*shared=*/true));  // room for 10 + 1024 + a quarter
  const pid_t reader = ForkReader(copy, 3000);
  EXPECT_FALSE(copy.CopyFrom(*tree));
  copy.Publish();
  EXPECT_EQ(ExitCodeOf(reader), 2);  // the snapshot copies the tree itself then
}

TEST(BlockCopyTest, MemoryIsKeptOnlyForACopyOfTheSameKind) {
  TempDir dir;
  auto tree = TreeOf(dir, 100);
  BlockCopy copy;
  ASSERT_TRUE(copy.Reserve(100));
  EXPECT_FALSE(copy.shared());
  const auto first = copy.Range();
  ASSERT_TRUE(copy.CopyFrom(*tree));
  ASSERT_TRUE(copy.Reserve(100));
  EXPECT_EQ(copy.Range(), first);  // kept: its pages are written already
  ASSERT_TRUE(copy.Reserve(100, /*shared=*/true));
  EXPECT_TRUE(copy.shared());  // mapped again, shared
  // A republished copy starts over: a reader forked now waits for this copy, not the last one.
  ASSERT_TRUE(copy.CopyFrom(*tree));
  copy.Publish();
  ASSERT_TRUE(copy.Reserve(100, /*shared=*/true));
  const pid_t reader = ForkReader(copy, 100);
  ASSERT_TRUE(copy.CopyFrom(*tree));
  copy.Publish();
  EXPECT_EQ(ExitCodeOf(reader), 0);
}

// Pages of [begin, end) in memory (mincore).
size_t ResidentPages(uint64_t begin, uint64_t end) {
  std::vector<unsigned char> in((end - begin + 4095) / 4096);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, in.data()), 0);
  return static_cast<size_t>(
      std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

// The pages a copy of `blocks` blocks spans (the header's first).
size_t PagesFor(uint64_t blocks) {
  return (64 + blocks * sizeof(LeakedBlock) + 4095) / 4096;
}

// A small heap's copy writes the pages its blocks need before the locks (a quarter more and 128),
// not the whole room for blocks allocated meanwhile (1,024 more); blocks beyond those pages still
// fit the room. A kept copy writes what a larger heap needs before its next copy.
TEST(BlockCopyTest, OnlyThePagesTheBlocksNeedAreWrittenBeforeTheCopy) {
  TempDir dir;
  BlockCopy copy;
  ASSERT_TRUE(copy.Reserve(200));
  const auto [begin, end] = copy.Range();
  EXPECT_EQ((end - begin) / 4096, PagesFor(200 + 50 + 1024));
  EXPECT_EQ(ResidentPages(begin, end), PagesFor(200 + 50 + 128));
  EXPECT_LT(PagesFor(200 + 50 + 128), PagesFor(200 + 50 + 1024));
  ASSERT_TRUE(copy.Reserve(220));  // kept (room enough), written further
  EXPECT_EQ(copy.Range().first, begin);
  EXPECT_EQ(ResidentPages(begin, end), PagesFor(220 + 55 + 128));
  auto tree = TreeOf(dir, 1200);  // past the written pages, within the room
  ASSERT_TRUE(copy.CopyFrom(*tree));
  EXPECT_EQ(copy.blocks().size(), 1200u);
  EXPECT_EQ(ResidentPages(begin, end), PagesFor(1200));
}

}  // namespace
}  // namespace heapgraph::scanner
