// BuildDumpReport on synthetic recordings: the totals, the groups in GroupByStack() order with the
// top ones resolved, each stack split back into its return addresses (an inline chain stays with
// its address, a recursive call's repeated address does not merge), symbolized through this test
// binary or not at all, the estimates of a sampled recording, and an unreadable stack that stops
// the report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include "heap/platform/LoadedObject.h"
#include "report/DumpReport.h"
#include "tests/TempDir.h"
#include "tests/reader/SyntheticRecording.h"

// Return addresses inside this binary, as a stack walker records them: one in code that
// DumpSites() inlined from DumpSiteInner(), one in DumpSites()'s own. Outside the anonymous
// namespace so that the symbolized names are exact.
namespace heapgraph_dump_report_test {

__attribute__((noipa)) uint64_t ReturnAddress() {
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

__attribute__((always_inline)) inline uint64_t DumpSiteInner() {
  uint64_t address = ReturnAddress();
  asm volatile("" ::: "memory");  // keeps the call a call, not a tail jump
  return address;
}

__attribute__((noipa)) void DumpSites(uint64_t* inlined, uint64_t* plain) {
  *inlined = DumpSiteInner();
  *plain = ReturnAddress();
  asm volatile("" ::: "memory");
}

}  // namespace heapgraph_dump_report_test

namespace heapgraph::report {
namespace {

using format::AllocFunction;
using synthetic::SyntheticRecording;
namespace site = heapgraph_dump_report_test;

constexpr uint64_t kNowhere = 0xdeadbeef0000;  // outside every module

class DumpReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    site::DumpSites(&inlined_, &plain_);
    // This binary as one module wide enough to hold both sites, at its load bias (0 when it is
    // not position independent, as sanitized test executables are not).
    LoadedObject self;
    ASSERT_TRUE(LoadedObject::Find(reinterpret_cast<uintptr_t>(&site::DumpSites), &self));
    bias_ = self.bias;
    rec_.AddModule(std::filesystem::read_symlink("/proc/self/exe").string(), bias_, self.map_start,
                   std::max(inlined_, plain_) + 1, {0x01, 0x02});
  }
  DumpReport Build(Symbolizer* symbolizer, size_t top = 20) {
    synthetic::Files files = rec_.Build();
    if (sample_mean_ != 0) {
      synthetic::Patch(files, format::kHeapTreeFile, offsetof(format::FileHeader, version),
                       format::kSampledTreeVersion);
      synthetic::Patch(files, format::kHeapTreeFile, offsetof(format::TreeHeader, sample_mean),
                       sample_mean_);
    }
    if (broken_stack_ != 0) {
      synthetic::Patch(files, format::kStackFile, SyntheticRecording::SlotOffset(broken_stack_),
                       uint64_t{0});
    }
    synthetic::WriteFiles(dir_.path(), files);
    RecordingReader reader(dir_.path());
    return BuildDumpReport(reader, symbolizer, {.top = top});
  }

  SyntheticRecording rec_;
  TempDir dir_;
  uint64_t bias_ = 0, inlined_ = 0, plain_ = 0;
  uint32_t sample_mean_ = 0;
  uint32_t broken_stack_ = 0;
};

TEST_F(DumpReportTest, TotalsAndGroupsInGroupByStackOrder) {
  uint32_t stack = rec_.AddStack({plain_});
  for (uint64_t a = 0x1000; a < 0x4000; a += 0x1000) {
    rec_.AddBlock(TreeKind::kHeap, a, 48, AllocFunction::kMalloc, stack);
  }
  rec_.AddBlock(TreeKind::kHeap, 0x5000, 100, AllocFunction::kMalloc, 0);
  rec_.AddBlock(TreeKind::kVm, 0x7e0000000000, 1 << 20, AllocFunction::kMmap, stack);
  rec_.SetDropped(TreeKind::kHeap, 1, 4);
  rec_.SetSession(777, "/nonexistent/app");
  DumpReport r = Build(nullptr);
  EXPECT_EQ(r.directory, dir_.path());
  EXPECT_EQ(r.live_blocks, 5u);
  EXPECT_EQ(r.live_bytes, 3u * 48 + 100 + (1 << 20));
  EXPECT_EQ(r.unique_stacks, 2u);  // `stack` and 0
  EXPECT_EQ(r.dropped, 4u);
  EXPECT_EQ(r.modules, 1u);
  ASSERT_TRUE(r.session.has_value());
  EXPECT_EQ(r.session->pid, 777);
  EXPECT_EQ(r.sample_mean, 0u);
  EXPECT_TRUE(r.torn.empty());
  EXPECT_TRUE(r.unreadable_stack.empty());
  EXPECT_EQ(r.group_count, 3u);
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[0].rank, 1u);
  EXPECT_EQ(r.groups[0].group.category, "VM: anonymous");
  EXPECT_EQ(r.groups[1].rank, 2u);
  EXPECT_EQ(r.groups[1].group.count, 3u);
  EXPECT_EQ(r.groups[1].group.bytes, 3u * 48);
  EXPECT_EQ(r.groups[1].addresses.size(), 1u);
  EXPECT_EQ(r.groups[2].group.stack, 0u);
  EXPECT_TRUE(r.groups[2].addresses.empty());
}

TEST_F(DumpReportTest, TopLimitsTheResolvedGroupsAndZeroMeansAll) {
  for (uint64_t i = 0; i < 4; ++i) {
    uint32_t stack = rec_.AddStack({plain_, 0x1000 + i});
    rec_.AddBlock(TreeKind::kHeap, 0x1000 * (i + 1), 16 * (i + 1), AllocFunction::kMalloc, stack);
  }
  DumpReport top = Build(nullptr, 2);
  EXPECT_EQ(top.group_count, 4u);
  ASSERT_EQ(top.groups.size(), 2u);
  EXPECT_EQ(top.groups[0].group.bytes, 64u);
  EXPECT_EQ(top.groups[1].rank, 2u);
  EXPECT_EQ(Build(nullptr, 0).groups.size(), 4u);
  EXPECT_EQ(Build(nullptr, 9).groups.size(), 4u);
}

TEST_F(DumpReportTest, StacksSplitIntoReturnAddressesWithTheirInlineChains) {
  // Innermost first: the inlined site, the plain site twice (a recursive call), nowhere.
  uint32_t stack = rec_.AddStack({inlined_, plain_, plain_, kNowhere});
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, stack);
  Symbolizer symbolizer;
  DumpReport r = Build(&symbolizer);
  ASSERT_EQ(r.groups.size(), 1u);
  const std::vector<DumpAddress>& a = r.groups[0].addresses;
  ASSERT_EQ(a.size(), 4u);

  EXPECT_EQ(a[0].where().address, inlined_);
  EXPECT_TRUE(a[0].in_module());
  EXPECT_TRUE(a[0].symbolized());
  ASSERT_EQ(a[0].frames.size(), 2u);
  EXPECT_EQ(a[0].frames[0].function, "heapgraph_dump_report_test::DumpSiteInner()");
  EXPECT_TRUE(a[0].frames[0].inlined);
  EXPECT_NE(a[0].frames[0].file.find("DumpReportTest.cc"), std::string::npos);
  EXPECT_EQ(a[0].frames[1].function,
            "heapgraph_dump_report_test::DumpSites(unsigned long*, unsigned long*)");
  EXPECT_FALSE(a[0].frames[1].inlined);
  EXPECT_EQ(a[0].where().build_id, "0102");

  for (size_t i : {1, 2}) {
    EXPECT_EQ(a[i].where().address, plain_);
    ASSERT_EQ(a[i].frames.size(), 1u);
    EXPECT_EQ(a[i].frames[0].function,
              "heapgraph_dump_report_test::DumpSites(unsigned long*, unsigned long*)");
    EXPECT_FALSE(a[i].frames[0].inlined);
  }

  EXPECT_EQ(a[3].where().address, kNowhere);
  EXPECT_FALSE(a[3].in_module());
  EXPECT_FALSE(a[3].symbolized());
  EXPECT_EQ(a[3].frames.size(), 1u);
}

TEST_F(DumpReportTest, WithoutSymbolizerEachAddressIsOneFrameWithoutSource) {
  uint32_t stack = rec_.AddStack({inlined_, plain_, plain_});
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, stack);
  DumpReport r = Build(nullptr);
  ASSERT_EQ(r.groups.size(), 1u);
  const std::vector<DumpAddress>& a = r.groups[0].addresses;
  ASSERT_EQ(a.size(), 3u);
  for (const DumpAddress& address : a) {
    EXPECT_TRUE(address.in_module());
    EXPECT_FALSE(address.symbolized());
    EXPECT_EQ(address.frames.size(), 1u);
  }
  EXPECT_EQ(a[0].where().offset, inlined_ - bias_);
  EXPECT_EQ(a[0].where().function, "");
}

TEST_F(DumpReportTest, SampledRecordingCarriesEstimates) {
  sample_mean_ = 1024;
  uint32_t stack = rec_.AddStack({plain_});
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 64, AllocFunction::kMalloc, stack);
  rec_.AddBlock(TreeKind::kHeap, 0x2000, 64, AllocFunction::kMalloc, stack);
  DumpReport r = Build(nullptr);
  EXPECT_EQ(r.sample_mean, 1024u);
  EXPECT_GT(r.live.count(), 2.0);  // each 64-byte block stands for about 1024 / 64 blocks
  EXPECT_GT(r.live.count_error(), 0.0);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].group.estimate.mean(), 1024u);
  EXPECT_DOUBLE_EQ(r.groups[0].group.estimate.count(), r.live.count());
}

TEST_F(DumpReportTest, UnreadableStackStopsTheReportBeforeItsGroup) {
  uint32_t big = rec_.AddStack({plain_});
  uint32_t small = rec_.AddStack({inlined_});
  rec_.AddBlock(TreeKind::kHeap, 0x1000, 4096, AllocFunction::kMalloc, big);
  rec_.AddBlock(TreeKind::kHeap, 0x2000, 16, AllocFunction::kMalloc, small);
  rec_.AddBlock(TreeKind::kHeap, 0x3000, 8, AllocFunction::kMalloc, 0);
  broken_stack_ = small;
  DumpReport r = Build(nullptr);
  EXPECT_EQ(r.unreadable_stack.rfind("stacks: corrupt node " + std::to_string(small), 0), 0u)
      << r.unreadable_stack;
  EXPECT_EQ(r.group_count, 3u);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].group.stack, big);
  // Below the limit it is never read.
  EXPECT_TRUE(Build(nullptr, 1).unreadable_stack.empty());
}

TEST(DumpReportNames, SessionStatesAndTreeFiles) {
  EXPECT_STREQ(SessionStateName(format::kSessionRecording), "recording");
  EXPECT_STREQ(SessionStateName(format::kSessionExited), "exited");
  EXPECT_STREQ(SessionStateName(0), "unknown state");
  EXPECT_STREQ(TreeFileName(TreeKind::kHeap), "heap.tree");
  EXPECT_STREQ(TreeFileName(TreeKind::kVm), "vm.tree");
}

}  // namespace
}  // namespace heapgraph::report
