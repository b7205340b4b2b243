// The C API in a program linked with libheapgraph (tests/programs/hg_pause_resume.cc): while
// paused nothing new is recorded but frees still apply; heapgraph_recording_dir() names the
// directory the recording is in.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

class RecorderPauseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ =
        std::make_unique<ChildProcess>(ProgramPath("hg_pause_resume"), std::vector<std::string>{},
                                       RecordingEnv(root_.path(), "", /*preload=*/false));
    ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
    dir_ = root_.DirectoryOf(child_->pid());
    ASSERT_FALSE(dir_.empty()) << "the linked program did not record\n" << child_->Describe();
    reader_ = std::make_unique<RecordingReader>(dir_);
  }

  void TearDown() override {
    if (child_ != nullptr) {
      EXPECT_TRUE(child_->Finish()) << child_->Describe();
    }
  }

  const LiveBlock* Block(const std::string& name) {
    return FindBlock(*reader_, child_->Number(name));
  }

  TempRoot root_;
  std::unique_ptr<ChildProcess> child_;
  std::string dir_;
  std::unique_ptr<RecordingReader> reader_;
};

TEST_F(RecorderPauseTest, AllocationsWhilePausedAreNotRecorded) {
  ASSERT_NE(Block("before_pause"), nullptr);
  EXPECT_EQ(Block("before_pause")->size, 1111u);
  EXPECT_EQ(Block("while_paused"), nullptr);
  ASSERT_NE(Block("after_resume"), nullptr);
  EXPECT_EQ(Block("after_resume")->size, 4444u);
}

TEST_F(RecorderPauseTest, FreesWhilePausedStillApply) {
  EXPECT_EQ(Block("freed_paused"), nullptr);
}

TEST_F(RecorderPauseTest, IsRecordingFollowsPauseAndResume) {
  EXPECT_EQ(child_->Field("recording"), (std::vector<std::string>{"1", "0", "1"}));
}

TEST_F(RecorderPauseTest, RecordingDirMatchesTheDirectoryFound) {
  std::vector<std::string> dir = child_->Field("dir");
  ASSERT_EQ(dir.size(), 1u) << child_->Describe();
  EXPECT_TRUE(std::filesystem::equivalent(dir[0], dir_)) << dir[0] << " vs " << dir_;
  EXPECT_EQ(dir[0].back() == '/', false) << "the path must end without '/'";
}

TEST_F(RecorderPauseTest, SetOptionsCountsRejectedEntries) {
  EXPECT_EQ(child_->Number("set_options_rejected"), 1u);
  std::vector<std::string> lines = child_->StderrLines();
  ASSERT_EQ(lines.size(), 1u) << child_->Stderr();
  EXPECT_EQ(lines[0].rfind("heapgraph: ", 0), 0u);
  EXPECT_NE(lines[0].find("bogus"), std::string::npos);
}

}  // namespace
}  // namespace heapgraph::proctest
