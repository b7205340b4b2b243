// tests/scanner: ExplainScan on real memory of this process, written to a memfd and read back: an
// address target's chain from a root range (a page standing for a global) through two blocks, with
// the word offset that links them; an address inside no block matches nothing; an unmarked block
// is a leak without a chain; a truncated result is an error, not a crash.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "scanner/ExplainScan.h"

namespace heapgraph::scanner {
namespace {

class ExplainScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_[1] = reinterpret_cast<uint64_t>(b_);  // a -> b at +8; c is referenced by nothing
    std::vector<BlockRange> ranges = {{Address(a_), 32}, {Address(b_), 16}, {Address(c_), 16}};
    std::sort(ranges.begin(), ranges.end(),
              [](const BlockRange& x, const BlockRange& y) { return x.begin < y.begin; });
    for (const BlockRange& r : ranges) blocks_.push_back({r.begin, r.size, 7, 0, {}});
    index_.emplace(
        std::vector<BlockRange, MmapAllocator<BlockRange>>(ranges.begin(), ranges.end()));
    root_ = static_cast<uint64_t*>(
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(root_, MAP_FAILED);
    root_[3] = Address(a_);
    char line[128];
    snprintf(line, sizeof(line), "%lx-%lx rw-p 00000000 00:00 0\n",
             static_cast<unsigned long>(Address(root_)),
             static_cast<unsigned long>(Address(root_) + 4096));
    mappings_.ParseText(line);
    roots_.Compute(mappings_, {}, *index_, 0, {}, 0);
    marker_.emplace(*index_);
    marker_->ScanRoot(Address(root_), Address(root_) + 4096);
    marker_->Propagate();
    fd_ = memfd_create("explain-test", MFD_CLOEXEC);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    munmap(root_, 4096);
    close(fd_);
  }
  static uint64_t Address(const void* p) { return reinterpret_cast<uint64_t>(p); }

  ExplainScanResult Explain(const ExplainRequest& request) {
    RootContext context{roots_, {}, 0, 0, nullptr, &mappings_};
    EXPECT_TRUE(ExplainScan::WriteTo(fd_, {*index_, *marker_, blocks_, context, nullptr, request}));
    ExplainScanResult result;
    std::string error;
    EXPECT_TRUE(ExplainScan::ReadFrom(fd_, request.targets(), &result, &error)) << error;
    return result;
  }

  alignas(16) uint64_t a_[4] = {};
  alignas(16) uint64_t b_[2] = {};
  alignas(16) uint64_t c_[2] = {};
  std::vector<LeakedBlock> blocks_;
  std::optional<BlockIndex> index_;
  std::optional<HeapMarker> marker_;
  uint64_t* root_ = nullptr;
  roots::ProcessMappings mappings_;
  RootRanges roots_;
  int fd_ = -1;
};

TEST_F(ExplainScanTest, ChainsFromTheRootWordThroughEachBlock) {
  ExplainRequest request;
  request.addresses = {Address(b_) + 4, Address(c_), 0x10};
  ExplainScanResult r = Explain(request);
  EXPECT_TRUE(r.enabled);
  EXPECT_EQ(r.matched, (std::vector<uint64_t>{1, 1, 0}));
  ASSERT_EQ(r.chains.size(), 2u);

  const ExplainChain& b = r.chains[0];
  EXPECT_EQ(b.target, 0u);
  EXPECT_TRUE(b.reached);
  EXPECT_FALSE(b.leaked);
  EXPECT_EQ(b.root.kind, RootKind::kOther);
  EXPECT_EQ(b.root.address, Address(&root_[3]));
  EXPECT_EQ(b.root.region_begin, Address(root_));
  EXPECT_EQ(b.root.region_end, Address(root_) + 4096);
  ASSERT_EQ(b.steps.size(), 2u);
  EXPECT_EQ(b.steps[0].address, Address(a_));
  EXPECT_EQ(b.steps[0].offset, 0u);
  EXPECT_EQ(b.steps[1].address, Address(b_));
  EXPECT_EQ(b.steps[1].offset, 8u);  // a's word at +8 points to b
  EXPECT_EQ(b.steps[1].stack, 7u);

  const ExplainChain& c = r.chains[1];
  EXPECT_EQ(c.target, 1u);
  EXPECT_TRUE(c.leaked);
  EXPECT_FALSE(c.reached);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_EQ(c.steps[0].address, Address(c_));
}

TEST_F(ExplainScanTest, FunctionTargetsMatchNothingWithoutAStackTable) {
  ExplainRequest request;
  request.functions = 1;
  request.code.push_back({0x1000, 0x2000, 0});
  ExplainScanResult r = Explain(request);
  EXPECT_EQ(r.matched, (std::vector<uint64_t>{0}));
  EXPECT_TRUE(r.chains.empty());
}

TEST_F(ExplainScanTest, ATruncatedResultIsAnError) {
  ExplainRequest request;
  request.addresses = {Address(a_)};
  Explain(request);
  ASSERT_EQ(ftruncate(fd_, 40), 0);
  ExplainScanResult r;
  std::string error;
  EXPECT_FALSE(ExplainScan::ReadFrom(fd_, 1, &r, &error));
  EXPECT_EQ(error, "the snapshot process wrote a truncated explanation");
  EXPECT_FALSE(ExplainScan::ReadFrom(fd_, 2, &r, &error));  // another request's
  EXPECT_EQ(error, "the snapshot process wrote no explanation");
}

}  // namespace
}  // namespace heapgraph::scanner
