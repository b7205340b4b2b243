// StackResolver without a symbolizer, and ResolveOrThrow() on a readable and an unreadable stack
// of a synthetic recording. (Its symbolizing, caching and frame sharing are tested with the leak
// report, tests/report/LeakReportTest.cc.)
#include <gtest/gtest.h>

#include <string>

#include "report/StackResolver.h"
#include "tests/TempDir.h"
#include "tests/reader/SyntheticRecording.h"

namespace heapgraph::report {
namespace {

class StackResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = rec_.AddStack({0x555500001234, 0x7f0000000010});  // in the app; outside every module
    bad_ = rec_.AddStack({0x555500002000});
    rec_.AddModule("/nonexistent/app", 0x555500000000, 0x555500000000, 0x555500010000, {0xab});
    files_ = rec_.Build();
  }
  RecordingReader Read() {
    synthetic::WriteFiles(dir_.path(), files_);
    return RecordingReader(dir_.path());
  }
  // Empties stack `bad_`'s slot: the recording can no longer read it.
  void BreakBadStack() {
    synthetic::Patch(files_, format::kStackFile, synthetic::SyntheticRecording::SlotOffset(bad_),
                     uint64_t{0});
  }

  synthetic::SyntheticRecording rec_;
  synthetic::Files files_;
  TempDir dir_;
  uint32_t good_ = 0, bad_ = 0;
};

TEST_F(StackResolverTest, WithoutSymbolizerFramesKeepModuleAndOffset) {
  RecordingReader reader = Read();
  StackResolver resolver(reader, nullptr);
  const FrameList& frames = resolver.Resolve(good_);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].address, 0x555500001234u);
  EXPECT_EQ(frames[0].module, "app");
  EXPECT_EQ(frames[0].module_path, "/nonexistent/app");
  EXPECT_EQ(frames[0].build_id, "ab");
  EXPECT_EQ(frames[0].offset, 0x1234u);
  EXPECT_EQ(frames[0].function, "");
  EXPECT_FALSE(frames[0].inlined);
  EXPECT_EQ(frames[1].address, 0x7f0000000010u);
  EXPECT_EQ(frames[1].module_path, "");
  EXPECT_EQ(frames[1].offset, 0u);
}

TEST_F(StackResolverTest, ResolveOrThrowCachesLikeResolve) {
  RecordingReader reader = Read();
  StackResolver resolver(reader, nullptr);
  const FrameList& first = resolver.ResolveOrThrow(good_);
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(&resolver.ResolveOrThrow(good_), &first);
  EXPECT_EQ(&resolver.Resolve(good_), &first);
  EXPECT_TRUE(resolver.ResolveOrThrow(0).empty());
  EXPECT_TRUE(resolver.warnings().empty());
}

TEST_F(StackResolverTest, ResolveOrThrowThrowsForAnUnreadableStackEveryTime) {
  BreakBadStack();
  RecordingReader reader = Read();
  StackResolver resolver(reader, nullptr);
  for (int i = 0; i < 2; ++i) {
    try {
      resolver.ResolveOrThrow(bad_);
      ADD_FAILURE() << "no RecordingError";
    } catch (const RecordingError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("stacks: corrupt node " + std::to_string(bad_), 0), 0u)
          << e.what();
    }
  }
  EXPECT_TRUE(resolver.warnings().empty());
  // Resolve() warns instead, and caches the stack empty: ResolveOrThrow() then returns that.
  EXPECT_TRUE(resolver.Resolve(bad_).empty());
  EXPECT_EQ(resolver.warnings().size(), 1u);
  EXPECT_TRUE(resolver.ResolveOrThrow(bad_).empty());
}

}  // namespace
}  // namespace heapgraph::report
