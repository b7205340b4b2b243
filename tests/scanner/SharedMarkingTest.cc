// tests/scanner: scanner::SharedMarking, the snapshot's marking in two processes. Blocks reached
// only from the roots dealt to the helper (every second 1 MiB piece, every second thread's
// registers) are marked in the shared array too, each block is scanned once (the statistics add
// up), and the helper is waited for.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "scanner/SharedMarking.h"

namespace heapgraph::scanner {
namespace {

constexpr size_t kMiB = 1u << 20;

// Eight real malloc'd blocks of 64 bytes (8 pointer slots) in address order, and a private
// 3 MiB mapping that is the only root range.
class SharedMarkingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 8; ++i) blocks_.push_back(static_cast<uint64_t*>(calloc(8, 8)));
    std::sort(blocks_.begin(), blocks_.end());
    std::vector<BlockRange, MmapAllocator<BlockRange>> ranges;
    for (uint64_t* b : blocks_) ranges.push_back({reinterpret_cast<uint64_t>(b), 64});
    index_ = std::make_unique<BlockIndex>(std::move(ranges));
    void* root =
        mmap(nullptr, 3 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(root, MAP_FAILED);
    root_ = static_cast<uint8_t*>(root);
  }
  void TearDown() override {
    munmap(root_, 3 * kMiB);
    for (uint64_t* b : blocks_) free(b);
  }

  uint64_t Addr(int i) { return reinterpret_cast<uint64_t>(blocks_[i]); }
  void PutInRoot(size_t offset, int block) {
    *reinterpret_cast<uint64_t*>(root_ + offset) = Addr(block);
  }
  // The root mapping as the only one of the process map.
  void ComputeRoots() {
    char line[128];
    snprintf(line, sizeof(line), "%lx-%lx rw-p 00000000 00:00 0\n",
             reinterpret_cast<unsigned long>(root_),
             reinterpret_cast<unsigned long>(root_ + 3 * kMiB));
    mappings_.ParseText(line);
    roots_.Compute(mappings_, {}, *index_, /*caller_stack_pointer=*/0, {}, /*static_tls_size=*/0);
    ASSERT_EQ(roots_.ranges().size(), 1u);
  }
  std::vector<int> Marked(const SharedMarking& marking) {
    std::vector<int> marked;
    for (int i = 0; i < 8; ++i) {
      if (marking.marks()[i] != 0) marked.push_back(i);
    }
    return marked;
  }

  std::vector<uint64_t*> blocks_;
  std::unique_ptr<BlockIndex> index_;
  uint8_t* root_ = nullptr;
  roots::ProcessMappings mappings_;
  RootRanges roots_;
};

TEST_F(SharedMarkingTest, MarksWhatEitherProcessReaches) {
  PutInRoot(0, 0);              // piece 0: this process
  PutInRoot(kMiB + 8, 3);       // piece 1: the helper
  PutInRoot(2 * kMiB + 16, 5);  // piece 2: this process
  blocks_[0][2] = Addr(1);
  blocks_[3][7] = Addr(4);  // propagated by the helper
  ComputeRoots();
  roots::ThreadInfo threads[3];
  threads[0].is_caller = true;  // never a root
  threads[0].regs[0] = Addr(7);
  threads[1].regs[3] = Addr(2);  // thread 0 of the others: this process
  threads[2].regs[5] = Addr(6);  // thread 1: the helper

  SharedMarking marking(*index_, /*interior_pointers=*/true);
  ASSERT_TRUE(marking.Map());
  ASSERT_TRUE(marking.Mark(roots_, threads));
  EXPECT_EQ(Marked(marking), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(marking.stats().heap_words, 7u * 8u);  // each marked block scanned once, in all
  marking.FinishTyping();                          // no typing share: waits for the helper
  EXPECT_FALSE(marking.AwaitHelper());             // already waited for
  EXPECT_TRUE(marking.identities().empty());
}

TEST_F(SharedMarkingTest, TheHelperExitsNormallyAfterMarking) {
  PutInRoot(kMiB, 3);
  ComputeRoots();
  SharedMarking marking(*index_, /*interior_pointers=*/false);
  ASSERT_TRUE(marking.Map());
  ASSERT_TRUE(marking.Mark(roots_, {}));
  EXPECT_EQ(Marked(marking), (std::vector<int>{3}));
  EXPECT_TRUE(marking.AwaitHelper());
}

}  // namespace
}  // namespace heapgraph::scanner
