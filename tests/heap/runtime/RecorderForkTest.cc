// fork() from a multi-threaded recorded process (tests/programs/hg_fork_threads.cc): no deadlock,
// every child records into its own directory that starts from the parent's state, and nothing a
// child does reaches the parent's directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <memory>
#include <string>

#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

using format::AllocFunction;

constexpr size_t kChildren = 20;
constexpr uint64_t kChildSizeBase = 7700;
// Small files: 21 directories are written.
constexpr char kForkOptions[] = "shards=16,shard_capacity_log2=16,stack_slots_log2=18";

struct KnownBlock {
  uint64_t address;
  uint64_t size;
};

class RecorderForkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ =
        std::make_unique<ChildProcess>(ProgramPath("hg_fork_threads"), std::vector<std::string>{},
                                       RecordingEnv(root_.path(), kForkOptions));
    // Each forked child has 60 s before the parent kills it; a deadlock shows as a timeout.
    ASSERT_TRUE(parent_->WaitReady(milliseconds(150000))) << parent_->Describe();
    for (const auto& r : parent_->Records("prefork")) {
      known_.push_back({ParseNumber(r.at(0)), ParseNumber(r.at(1))});
    }
    ASSERT_EQ(known_.size(), 10u) << parent_->Describe();
  }

  void TearDown() override {
    if (parent_ != nullptr) {
      EXPECT_TRUE(parent_->Finish()) << parent_->Describe();
    }
  }

  void ExpectKnown(const RecordingReader& reader, size_t first, const std::string& who) {
    for (size_t i = first; i < known_.size(); ++i) {
      const LiveBlock* block = FindBlock(reader, known_[i].address);
      EXPECT_NE(block, nullptr) << who << " lost pre-fork block " << i;
      if (block != nullptr) {
        EXPECT_EQ(block->size, known_[i].size) << who << " block " << i;
      }
    }
  }

  // The child's trees, module map and session are its own files, not the parent's. (The stack
  // table is shared by design: it only grows, and ids stay valid in both processes.)
  void ExpectOwnFiles(const std::string& child_dir, const std::string& who) {
    std::string parent_dir = root_.DirectoryOf(parent_->pid());
    for (const char* name :
         {format::kHeapTreeFile, format::kVmTreeFile, format::kModuleFile, format::kSessionFile}) {
      struct stat parent_file, child_file;
      ASSERT_EQ(stat((parent_dir + "/" + name).c_str(), &parent_file), 0) << name;
      ASSERT_EQ(stat((child_dir + "/" + name).c_str(), &child_file), 0) << who << " " << name;
      EXPECT_NE(parent_file.st_ino, child_file.st_ino) << who << " shares the parent's " << name;
    }
  }

  TempRoot root_;
  std::unique_ptr<ChildProcess> parent_;
  std::vector<KnownBlock> known_;
};

TEST_F(RecorderForkTest, EveryChildExitsCleanly) {
  auto children = parent_->Records("child");
  ASSERT_EQ(children.size(), kChildren) << parent_->Describe();
  for (const auto& c : children) {
    int status = static_cast<int>(std::stol(c.at(1)));
    EXPECT_NE(status, -1) << "child " << c[0] << " hung (deadlock?) and was killed";
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << c[0] << " wait status " << status;
  }
  EXPECT_EQ(parent_->Records("forked").size(), kChildren) << parent_->Describe();
}

TEST_F(RecorderForkTest, EachChildRecordsIntoItsOwnDirectoryFromTheParentsState) {
  AddressRange child_code = RangeOf(*parent_, "ChildAllocate");
  ASSERT_LT(child_code.begin, child_code.end) << parent_->Describe();
  auto forked = parent_->Records("forked");
  ASSERT_EQ(forked.size(), kChildren) << parent_->Describe();
  for (const auto& f : forked) {
    pid_t pid = static_cast<pid_t>(std::stol(f.at(0)));
    std::string dir = root_.DirectoryOf(pid);
    ASSERT_FALSE(dir.empty()) << "child " << pid << " has no recording directory";
    RecordingReader reader(dir);
    ASSERT_TRUE(reader.session().has_value());
    EXPECT_EQ(reader.session()->pid, pid);
    std::string who = "child " + std::to_string(pid);
    EXPECT_EQ(reader.session()->state, format::kSessionExited) << who << " exited with exit(0)";
    ExpectOwnFiles(dir, who);
    ExpectKnown(reader, 1, who);
    EXPECT_EQ(FindBlock(reader, known_[0].address), nullptr) << who << " freed block 0";
    const LiveBlock* own = FindBlock(reader, ParseNumber(f.at(1)));
    ASSERT_NE(own, nullptr) << who << ": its own block is not recorded";
    EXPECT_EQ(own->size, ParseNumber(f.at(2)));
    EXPECT_EQ(own->function, AllocFunction::kMalloc);
    EXPECT_TRUE(StackPassesThrough(reader, *own, child_code))
        << who << ": stack misses ChildAllocate";
  }
}

TEST_F(RecorderForkTest, ChildrenDoNotTouchTheParentsDirectory) {
  std::string dir = root_.DirectoryOf(parent_->pid());
  ASSERT_FALSE(dir.empty());
  RecordingReader reader(dir);
  ASSERT_TRUE(reader.session().has_value());
  EXPECT_EQ(reader.session()->pid, parent_->pid());
  // Every child freed block 0 and allocated 7700 + i bytes; the parent did neither.
  ExpectKnown(reader, 0, "parent");
  for (const LiveBlock& block : reader.blocks()) {
    EXPECT_FALSE(block.size >= kChildSizeBase && block.size < kChildSizeBase + kChildren)
        << "the parent's recording holds a child's block of " << block.size << " bytes";
  }
  EXPECT_EQ(root_.Entries().size(), kChildren + 1);
}

// A child that execs right after fork (tests/programs/hg_fork_exec.cc running hg_simple) never
// allocates as a fork of its parent: the pid's one recording is that of the program it became.
TEST(RecorderForkExecTest, ForkThenExecLeavesThePidOneDirectoryOfTheNewProgram) {
  TempRoot root;
  RunResult run = RunToExit(ProgramPath("hg_fork_exec"), {ProgramPath("hg_simple")},
                            RecordingEnv(root.path(), kForkOptions));
  std::vector<std::string> child = FieldOf(run.lines, "child");
  ASSERT_EQ(child.size(), 2u) << run.stderr_text;
  int status = static_cast<int>(std::stol(child[1]));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  std::string prefix = child[0] + "-";
  std::vector<std::string> dirs;
  for (const std::string& entry : root.Entries()) {
    if (entry.rfind(prefix, 0) == 0) dirs.push_back(entry);
  }
  std::string listing;
  for (const std::string& dir : dirs) {
    RecordingReader reader(root.path() + "/" + dir);
    listing += "\n  " + dir + ": " + (reader.session() ? reader.session()->executable : "?");
  }
  ASSERT_EQ(dirs.size(), 1u) << "recordings of pid " << child[0] << ":" << listing;
  RecordingReader reader(root.path() + "/" + dirs[0]);
  ASSERT_TRUE(reader.session().has_value());
  EXPECT_TRUE(reader.session()->executable.ends_with("/hg_simple")) << listing;
}

}  // namespace
}  // namespace heapgraph::proctest
