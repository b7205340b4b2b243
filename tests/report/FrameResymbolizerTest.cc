// FrameResymbolizer on the symbolizer fixture (tests/report/CMakeLists.txt): frames of a stripped
// copy, as a report recorded on it holds them, named again from the separate debug file; the
// oracle is what the Symbolizer says about the unstripped library.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "report/FrameResymbolizer.h"
#include "tests/TempDir.h"
#include "tests/report/ReportSamples.h"
#include "tests/report/SymbolizerFixtureFiles.h"

namespace heapgraph::report {
namespace {

namespace fs = std::filesystem;

class FrameResymbolizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    build_id_ = ElfBuildId(kFixture);
    module_ = temp_.Path("libfixture.so");
    fs::copy_file(kStripped, module_);
    fs::create_directories(temp_.Path("debug"));
    fs::copy_file(kSplitDebug, temp_.Path("debug/libfixture.so.debug"));
    auto ranges = oracle_.FunctionRanges(kFixture, "fixture_c_function");
    ASSERT_EQ(ranges.size(), 1u);
    c_function_ = ranges[0].first;
  }

  // The frame a recording on the stripped copy left for return address `offset`: unnamed.
  ReportFrame Unnamed(uint64_t offset) const {
    ReportFrame f;
    f.address = 0x7f0000000000 + offset;
    f.module = "libfixture.so";
    f.module_path = module_;
    f.build_id = build_id_;
    f.offset = offset;
    return f;
  }
  // An address inside fixture_outer whose code is inlined: the oracle gives several frames.
  uint64_t InlinedReturnAddress() {
    auto ranges = oracle_.FunctionRanges(kFixture, "fixture_outer");
    EXPECT_EQ(ranges.size(), 1u);
    for (uint64_t a = ranges[0].first; a < ranges[0].second; ++a) {
      if (oracle_.Symbolize(kFixture, a).size() > 1) return a + 1;
    }
    ADD_FAILURE() << "no inlined code in fixture_outer";
    return 0;
  }
  // The oracle's frames of return address `offset`, as FrameResymbolizer should give them.
  std::vector<ReportFrame> Expected(uint64_t offset) {
    std::vector<ReportFrame> frames;
    for (const SourceFrame& s : oracle_.Symbolize(kFixture, offset - 1)) {
      ReportFrame f = Unnamed(offset);
      f.function = s.function;
      f.file = s.file;
      f.line = s.line;
      f.inlined = s.inlined;
      frames.push_back(f);
    }
    return frames;
  }

  TempDir temp_;
  Symbolizer oracle_;
  std::string build_id_;
  std::string module_;
  uint64_t c_function_ = 0;
  DebugFileSearch search_{{.debug_dirs = {temp_.Path("debug")}, .debuginfod = false}};
  Symbolizer symbolizer_;
};

TEST_F(FrameResymbolizerTest, AnUnnamedFrameGetsTheDebugFilesNameAndLine) {
  ReportFrame named = samples::Frame(0x555500001000, "main", "/src/a.cc", 3);
  ReportFrame unknown;
  unknown.address = 0x42;  // outside every module
  FrameList stack{Unnamed(c_function_ + 1), named, unknown};
  FrameResymbolizer resymbolizer(search_, symbolizer_);
  FrameList out = resymbolizer.Resolve(stack);
  std::vector<ReportFrame> expected = Expected(c_function_ + 1);
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(expected[0].function, "fixture_c_function");
  EXPECT_GT(expected[0].line, 0);
  expected.push_back(named);
  expected.push_back(unknown);
  EXPECT_EQ(out.ToVector(), expected);
  EXPECT_EQ(&out[1], &stack[1]);  // untouched frames stay shared
  EXPECT_EQ(resymbolizer.symbolized(), 1u);
}

TEST_F(FrameResymbolizerTest, AnInlinedAddressBecomesItsWholeInlineChain) {
  uint64_t offset = InlinedReturnAddress();
  std::vector<ReportFrame> expected = Expected(offset);
  ASSERT_GT(expected.size(), 1u);
  EXPECT_TRUE(expected.front().inlined);
  EXPECT_FALSE(expected.back().inlined);
  FrameResymbolizer resymbolizer(search_, symbolizer_);
  EXPECT_EQ(resymbolizer.Resolve(std::vector<ReportFrame>{Unnamed(offset)}), expected);
  // Named already (inline chain and all): with `all` the run of frames is replaced as one.
  FrameResymbolizer again(search_, symbolizer_, /*all=*/true);
  EXPECT_EQ(again.Resolve(expected), expected);
  EXPECT_EQ(again.symbolized(), 1u);
}

TEST_F(FrameResymbolizerTest, NamedFramesAreSymbolizedAgainOnlyWithAll) {
  ReportFrame stale = Unnamed(c_function_ + 1);
  stale.function = "stale_name";
  std::vector<ReportFrame> frames{stale};
  EXPECT_EQ(FrameResymbolizer(search_, symbolizer_).Resolve(frames), frames);
  EXPECT_EQ(FrameResymbolizer(search_, symbolizer_, true).Resolve(frames),
            Expected(c_function_ + 1));
}

TEST_F(FrameResymbolizerTest, AFrameNoFileOfItsBuildNamesKeepsModuleOffsetAndBuildId) {
  ReportFrame other_build = Unnamed(c_function_ + 1);
  other_build.build_id = "00112233";
  std::vector<ReportFrame> frames{other_build, Unnamed(0)};
  FrameResymbolizer resymbolizer(search_, symbolizer_);
  EXPECT_EQ(resymbolizer.Resolve(frames), frames);
  EXPECT_EQ(resymbolizer.symbolized(), 0u);
}

TEST_F(FrameResymbolizerTest, EveryStackOfALeakOrFoomReportIsResolved) {
  ReportDocument leak;
  leak.leak.emplace();
  leak.leak->leaks.emplace_back();
  leak.leak->leaks[0].stack = {Unnamed(c_function_ + 1)};
  FrameResymbolizer resymbolizer(search_, symbolizer_);
  resymbolizer.Resolve(leak);
  EXPECT_EQ(leak.leak->leaks[0].stack.ToVector(), Expected(c_function_ + 1));

  ReportDocument foom;
  foom.foom.emplace();
  FoomStack stack;
  stack.frames = {Unnamed(c_function_ + 1)};
  foom.foom->categories.emplace_back();
  foom.foom->categories[0].stacks = {stack};
  foom.foom->crash_lag.emplace();
  foom.foom->crash_lag->stack = stack;
  foom.foom->categories[0].name = "Malloc 64 B";
  foom.foom->categories[0].suspect_reasons = {"holds 90% of live bytes"};
  foom.foom->feature = FoomFeature(*foom.foom);
  const FeatureValue recorded = *foom.foom->feature;
  resymbolizer.Resolve(foom);
  // Caller1/Caller2 labelled again from the named frames (the feature's rule: the same as a
  // freshly built report's).
  EXPECT_EQ(foom.foom->feature->caller1, FoomFeature(*foom.foom)->caller1);
  EXPECT_EQ(foom.foom->feature->caller1.find("+0x"), std::string::npos)
      << recorded.caller1 << " -> " << foom.foom->feature->caller1;
  EXPECT_EQ(foom.foom->feature->reason, "holds 90% of live bytes");
  EXPECT_EQ(foom.foom->categories[0].stacks[0].frames, Expected(c_function_ + 1));
  EXPECT_EQ(foom.foom->crash_lag->stack.frames, Expected(c_function_ + 1));
  EXPECT_EQ(resymbolizer.symbolized(), 1u);  // one address, symbolized once
}

}  // namespace
}  // namespace heapgraph::report
