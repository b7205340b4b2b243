// Every interposed allocation function, exercised by a real child (tests/programs/
// hg_alloc_functions.cc) under LD_PRELOAD: what each records in heap.tree / vm.tree (address,
// size, function, stack) and what each removes.
#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

using format::AllocFunction;

constexpr uint64_t kPage = 4096;

class InterposerFunctionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ =
        std::make_unique<ChildProcess>(ProgramPath("hg_alloc_functions"),
                                       std::vector<std::string>{}, RecordingEnv(root_.path(), ""));
    ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
    std::string dir = root_.DirectoryOf(child_->pid());
    ASSERT_FALSE(dir.empty()) << "no recording directory for pid " << child_->pid();
    reader_ = std::make_unique<RecordingReader>(dir);
  }

  void TearDown() override {
    if (child_ != nullptr) {
      EXPECT_TRUE(child_->Finish()) << child_->Describe();
    }
  }

  uint64_t Address(const std::string& name) { return child_->Number(name); }

  // The block the child printed as `name` is live with this size and function; returns it.
  const LiveBlock* ExpectBlock(const std::string& name, uint64_t size, AllocFunction function,
                               TreeKind tree = TreeKind::kHeap) {
    uint64_t address = Address(name);
    const LiveBlock* block = FindBlock(*reader_, address, tree);
    EXPECT_NE(block, nullptr) << name << " at 0x" << std::hex << address << " is not recorded";
    if (block == nullptr) return nullptr;
    EXPECT_EQ(block->size, size) << name;
    EXPECT_EQ(FunctionName(block->function), FunctionName(function)) << name;
    EXPECT_TRUE(StackIsInProgram(*block)) << name << ": no frame in hg_alloc_functions";
    return block;
  }

  void ExpectGone(const std::string& name) {
    uint64_t address = Address(name);
    EXPECT_EQ(FindBlock(*reader_, address), nullptr)
        << name << " at 0x" << std::hex << address << " is still recorded";
  }

  void ExpectNoRegion(uint64_t begin, uint64_t length, const std::string& what) {
    std::vector<LiveBlock> found = Overlapping(*reader_, begin, begin + length, TreeKind::kVm);
    for (const LiveBlock& b : found) {
      ADD_FAILURE() << what << " (0x" << std::hex << begin << "+0x" << length
                    << ") overlaps the VM region 0x" << b.address << "+0x" << b.size << " ("
                    << FunctionName(b.function) << ")";
    }
  }

  // Some frame of the block's stack lies in the child's executable.
  bool StackIsInProgram(const LiveBlock& block) {
    for (uint64_t frame : reader_->Frames(block.stack)) {
      std::optional<ModuleLocation> where = reader_->Locate(frame);
      if (!where) continue;
      std::string path = reader_->modules()[where->module].path;
      if (path.ends_with("/hg_alloc_functions")) return true;
    }
    return false;
  }

  // Blocks made by `function` on behalf of the program (a frame in its executable).
  size_t CountFunction(AllocFunction function) {
    size_t n = 0;
    for (const LiveBlock& b : reader_->blocks()) {
      n += b.function == function && StackIsInProgram(b) ? 1 : 0;
    }
    return n;
  }

  TempRoot root_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<RecordingReader> reader_;
};

TEST_F(InterposerFunctionsTest, MallocRecordsItsSize) {
  ExpectBlock("malloc", 100, AllocFunction::kMalloc);
}

TEST_F(InterposerFunctionsTest, CallocRecordsCountTimesSize) {
  ExpectBlock("calloc", 7 * 13, AllocFunction::kCalloc);
}

TEST_F(InterposerFunctionsTest, ReallocGrowingInPlaceUpdatesTheSize) {
  ASSERT_NE(Address("realloc_grow"), 0u) << "the child never saw realloc grow in place";
  ExpectBlock("realloc_grow", 6000, AllocFunction::kRealloc);
}

TEST_F(InterposerFunctionsTest, ReallocMovingReplacesTheOldBlock) {
  ASSERT_NE(Address("realloc_move"), Address("realloc_move_old")) << "realloc did not move";
  ExpectBlock("realloc_move", 100000, AllocFunction::kRealloc);
  ExpectGone("realloc_move_old");
}

TEST_F(InterposerFunctionsTest, FailedReallocKeepsTheOldBlock) {
  EXPECT_EQ(child_->Field("realloc_fail"), (std::vector<std::string>{"1", std::to_string(ENOMEM)}));
  // The same block the failed reallocarray got: still its original malloc record.
  ExpectBlock("reallocarray_overflow_keep", 64, AllocFunction::kMalloc);
}

TEST_F(InterposerFunctionsTest, CallocOverflowFailsAndRecordsNothing) {
  EXPECT_EQ(child_->Field("calloc_overflow"),
            (std::vector<std::string>{"1", std::to_string(ENOMEM)}));
  EXPECT_EQ(CountFunction(AllocFunction::kCalloc), 1u);
}

TEST_F(InterposerFunctionsTest, ReallocOfNullAllocates) {
  ExpectBlock("realloc_null", 300, AllocFunction::kRealloc);
}

TEST_F(InterposerFunctionsTest, ReallocToZeroFrees) {
  ExpectGone("realloc_zero_old");
  if (Address("realloc_zero_result") != 0) {
    ExpectBlock("realloc_zero_result", 0, AllocFunction::kRealloc);
  }
}

TEST_F(InterposerFunctionsTest, ReallocArrayRecordsCountTimesSize) {
  ExpectBlock("reallocarray_null", 120, AllocFunction::kReallocArray);
  ExpectBlock("reallocarray_grow", 240, AllocFunction::kReallocArray);
  if (Address("reallocarray_grow") != Address("reallocarray_grow_old")) {
    ExpectGone("reallocarray_grow_old");
  }
}

TEST_F(InterposerFunctionsTest, ReallocArrayOverflowFailsWithEnomemAndRecordsNothing) {
  EXPECT_EQ(child_->Field("reallocarray_overflow"),
            (std::vector<std::string>{"1", std::to_string(ENOMEM)}));
  EXPECT_EQ(child_->Field("reallocarray_null_overflow"),
            (std::vector<std::string>{"1", std::to_string(ENOMEM)}));
  // The block passed to the failed call is untouched.
  ExpectBlock("reallocarray_overflow_keep", 64, AllocFunction::kMalloc);
  EXPECT_EQ(CountFunction(AllocFunction::kReallocArray), 2u);
}

TEST_F(InterposerFunctionsTest, MemalignFamilyHonoursTheAlignment) {
  EXPECT_EQ(Address("memalign") % 256, 0u);
  ExpectBlock("memalign", 100, AllocFunction::kMemalign);
  EXPECT_EQ(child_->Number("posix_memalign_result"), 0u);
  EXPECT_EQ(Address("posix_memalign") % 64, 0u);
  ExpectBlock("posix_memalign", 100, AllocFunction::kPosixMemalign);
  EXPECT_EQ(Address("aligned_alloc") % 128, 0u);
  ExpectBlock("aligned_alloc", 256, AllocFunction::kAlignedAlloc);
}

TEST_F(InterposerFunctionsTest, BadAlignmentsFailWithEinval) {
  // posix_memalign(3) and (4: not a multiple of sizeof(void*)) return EINVAL, *out untouched.
  std::string einval = std::to_string(EINVAL);
  EXPECT_EQ(child_->Field("posix_memalign_einval"),
            (std::vector<std::string>{einval, einval, "1"}));
  EXPECT_EQ(child_->Field("aligned_alloc_einval"), (std::vector<std::string>{"1", einval}));
  EXPECT_EQ(CountFunction(AllocFunction::kPosixMemalign), 1u);
  EXPECT_EQ(CountFunction(AllocFunction::kAlignedAlloc), 1u);
}

TEST_F(InterposerFunctionsTest, VallocAndPvallocArePageAligned) {
  EXPECT_EQ(Address("valloc") % kPage, 0u);
  ExpectBlock("valloc", 100, AllocFunction::kValloc);
  EXPECT_EQ(Address("pvalloc") % kPage, 0u);
  ExpectBlock("pvalloc", 100, AllocFunction::kPvalloc);
}

TEST_F(InterposerFunctionsTest, MallocOfZeroIsRecordedWithSizeZeroUntilFreed) {
  ExpectBlock("malloc0", 0, AllocFunction::kMalloc);
  ExpectGone("freed_zero");
}

TEST_F(InterposerFunctionsTest, MallocUsableSizeCoversTheRequest) {
  EXPECT_GE(child_->Number("usable"), 1000u);
}

// A free the recorder missed leaves a record; the next block recorded at that address (its tag
// still names the old slot) takes it out, so once that block is freed no record is left.
TEST_F(InterposerFunctionsTest, ABlockAtTheAddressOfAMissedFreeReplacesItsRecord) {
  ASSERT_EQ(Address("missed_first"), Address("missed_again"))
      << "glibc's tcache gave another chunk";
  ExpectGone("missed_again");
}

// The program writes every byte malloc_usable_size reports, then frees: the recorder's tag behind
// the block (heap/runtime/BlockTag.h) is not among those bytes, so each block is still removed.
// "1024" is memalign(64, 24).
TEST_F(InterposerFunctionsTest, BlocksFilledToTheirUsableSizeAreStillRemovedByFree) {
  for (uint64_t size : {1, 16, 24, 40, 1000, 5000, 70000, 200000, 1024}) {
    const std::string n = std::to_string(size);
    const uint64_t requested = size == 1024 ? 24 : size;
    EXPECT_GE(child_->Number("usable_" + n), requested) << n;
    EXPECT_LE(child_->Number("usable_" + n), requested + 4096) << n;
    ExpectGone("filled_" + n);
  }
}

TEST_F(InterposerFunctionsTest, FreeRemovesTheBlockAndPreservesErrno) {
  EXPECT_EQ(child_->Number("free_errno"), 1234u);
  ExpectGone("freed");
}

TEST_F(InterposerFunctionsTest, OperatorNewAndDeleteGoThroughMallocAndFree) {
  ExpectBlock("new", sizeof(double), AllocFunction::kMalloc);
  ExpectBlock("new_array", 6 * sizeof(long), AllocFunction::kMalloc);
  ExpectGone("deleted");
  ExpectGone("deleted_array");
}

TEST_F(InterposerFunctionsTest, AnonymousMmapIsAVmRegion) {
  ExpectBlock("mmap", 16 * kPage, AllocFunction::kMmap, TreeKind::kVm);
  EXPECT_EQ(FindBlock(*reader_, Address("mmap"), TreeKind::kHeap), nullptr);
}

TEST_F(InterposerFunctionsTest, MunmapOfTheMiddleLeavesTheTwoOuterParts) {
  uint64_t cut = Address("munmap_middle");
  const LiveBlock* head =
      ExpectBlock("munmap_middle", 4 * kPage, AllocFunction::kMmap, TreeKind::kVm);
  const LiveBlock* tail = FindBlock(*reader_, cut + 12 * kPage, TreeKind::kVm);
  ASSERT_NE(tail, nullptr) << "the tail of the cut region is not recorded";
  EXPECT_EQ(tail->size, 4 * kPage);
  EXPECT_EQ(tail->function, AllocFunction::kMmap);
  if (head != nullptr) {
    EXPECT_EQ(tail->stack, head->stack);
  }
  ExpectNoRegion(cut + 4 * kPage, 8 * kPage, "the unmapped middle");
}

TEST_F(InterposerFunctionsTest, MremapMovesTheRegion) {
  uint64_t old = Address("mremap_old");
  ASSERT_NE(Address("mremap"), old) << "mremap did not move";
  ExpectBlock("mremap", 32 * kPage, AllocFunction::kMremap, TreeKind::kVm);
  ExpectNoRegion(old, 4 * kPage, "the moved-away part");
  const LiveBlock* rest = FindBlock(*reader_, old + 4 * kPage, TreeKind::kVm);
  ASSERT_NE(rest, nullptr) << "the part mremap left behind is not recorded";
  EXPECT_EQ(rest->size, 6 * kPage);
  EXPECT_EQ(rest->function, AllocFunction::kMmap);
}

TEST_F(InterposerFunctionsTest, FileBackedMmapIsNotRecorded) {
  ASSERT_NE(Address("file_mmap"), 0u);
  ExpectNoRegion(Address("file_mmap"), kPage, "the file mapping");
}

}  // namespace
}  // namespace heapgraph::proctest
