// fork() from a multi-threaded recorded process (tests/programs/hg_fork_threads.cc): no deadlock,
// every child records into its own directory that starts from the parent's state, and nothing a
// child does reaches the parent's directory. A child records into memory copies until it lives
// (heap/runtime/ForkSnapshot, tests/programs/hg_fork_lives.cc): one that execs leaves nothing, one
// that lives, starts a thread or forks again is readable after a SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <memory>
#include <string>
#include <vector>

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

// A child that makes a shell's few allocations and then execs: no directory for the fork (it
// recorded into memory copies), only the program it became, and the parent's.
TEST(RecorderForkExecTest, ChildThatAllocatesThenExecsLeavesNoRecordingOfTheFork) {
  TempRoot root;
  RunResult run = RunToExit(ProgramPath("hg_fork_lives"), {"exec", "34", ProgramPath("hg_simple")},
                            RecordingEnv(root.path(), kForkOptions));
  std::vector<std::string> child = FieldOf(run.lines, "child");
  std::vector<std::string> reaped = FieldOf(run.lines, "reaped");
  ASSERT_EQ(child.size(), 1u) << run.stderr_text;
  ASSERT_EQ(reaped.size(), 1u) << run.stderr_text;
  int status = static_cast<int>(std::stol(reaped[0]));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  std::vector<std::string> entries = root.Entries();
  std::string listing;
  for (const std::string& entry : entries) listing += "\n  " + entry;
  ASSERT_EQ(entries.size(), 2u) << listing;
  RecordingReader reader(root.DirectoryOf(static_cast<pid_t>(std::stol(child[0]))));
  ASSERT_TRUE(reader.session().has_value()) << listing;
  EXPECT_TRUE(reader.session()->executable.ends_with("/hg_simple")) << listing;
  EXPECT_TRUE(run.stderr_text.empty()) << run.stderr_text;
}

// hg_fork_lives MODE: the parent, its known block, and the forked process the test kills.
class RecorderForkLivesTest : public ::testing::Test {
 protected:
  // Starts MODE, waits for "ready", SIGKILLs the process named by `victim_key`, lets the parent
  // finish; returns the victim's recording directory.
  std::string RunAndKill(const std::string& mode, const std::string& victim_key) {
    ChildProcess parent(ProgramPath("hg_fork_lives"), {mode},
                        RecordingEnv(root_.path(), kForkOptions));
    EXPECT_TRUE(parent.WaitReady()) << parent.Describe();
    lines_ = parent.lines();
    std::vector<std::string> victim = parent.Field(victim_key);
    EXPECT_EQ(victim.size(), 1u) << parent.Describe();
    if (victim.size() != 1) return "";
    victim_ = static_cast<pid_t>(std::stol(victim[0]));
    parent_ = parent.pid();
    EXPECT_EQ(kill(victim_, SIGKILL), 0);
    EXPECT_TRUE(parent.Finish()) << parent.Describe();
    stderr_ = parent.Stderr();
    return root_.DirectoryOf(victim_);
  }

  uint64_t Address(const std::string& key) const {
    std::vector<std::string> f = FieldOf(lines_, key);
    return f.empty() ? 0 : ParseNumber(f[0]);
  }

  // The victim's recording: its own session and files, the parent's known block and `keys`.
  void ExpectRecorded(const std::string& dir, const std::vector<std::string>& keys) {
    ASSERT_FALSE(dir.empty()) << "process " << victim_ << " left no recording; root holds "
                              << root_.Entries().size() << " entries";
    RecordingReader reader(dir);
    ASSERT_TRUE(reader.session().has_value());
    EXPECT_EQ(reader.session()->pid, victim_);
    EXPECT_NE(reader.session()->state, format::kSessionExited) << "it was killed";
    std::vector<std::string> all = {"known"};
    all.insert(all.end(), keys.begin(), keys.end());
    for (const std::string& key : all) {
      std::vector<std::string> f = FieldOf(lines_, key);
      ASSERT_EQ(f.size(), 2u) << key;
      const LiveBlock* block = FindBlock(reader, ParseNumber(f[0]));
      ASSERT_NE(block, nullptr) << key << " block not in the killed process's recording";
      EXPECT_EQ(block->size, ParseNumber(f[1])) << key;
    }
    std::string parent_dir = root_.DirectoryOf(parent_);
    for (const char* name :
         {format::kHeapTreeFile, format::kVmTreeFile, format::kModuleFile, format::kSessionFile}) {
      struct stat parent_file, own_file;
      ASSERT_EQ(stat((parent_dir + "/" + name).c_str(), &parent_file), 0) << name;
      ASSERT_EQ(stat((dir + "/" + name).c_str(), &own_file), 0) << name;
      EXPECT_NE(parent_file.st_ino, own_file.st_ino) << "shares the parent's " << name;
    }
    struct stat stacks;
    EXPECT_EQ(stat((dir + "/" + format::kStackFile).c_str(), &stacks), 0);
  }

  // Nothing the victim allocated reached the parent's recording.
  void ExpectParentUntouched(const std::vector<std::string>& keys) {
    RecordingReader reader(root_.DirectoryOf(parent_));
    ASSERT_TRUE(reader.session().has_value());
    EXPECT_EQ(reader.session()->pid, parent_);
    EXPECT_NE(FindBlock(reader, Address("known")), nullptr);
    for (const std::string& key : keys) {
      EXPECT_EQ(FindBlock(reader, Address(key)), nullptr) << key << " reached the parent";
    }
  }

  TempRoot root_;
  std::vector<std::string> lines_;
  std::string stderr_;
  pid_t victim_ = 0;
  pid_t parent_ = 0;
};

TEST_F(RecorderForkLivesTest, ChildThatLivesIsReadableAfterSigkill) {
  std::string dir = RunAndKill("live", "child");
  ExpectRecorded(dir, {"early", "late"});
  ExpectParentUntouched({"early", "late"});
  EXPECT_TRUE(stderr_.empty()) << stderr_;
}

TEST_F(RecorderForkLivesTest, ChildWritesItsDirectoryBeforeItsFirstThread) {
  std::string dir = RunAndKill("thread", "child");
  ExpectRecorded(dir, {"threaded"});
  ExpectParentUntouched({"threaded"});
  EXPECT_TRUE(stderr_.empty()) << stderr_;
}

// The child forks before it has a directory: the grandchild records from the child's copies and
// links the stack table from the grandparent's directory; the child writes its own at _exit.
TEST_F(RecorderForkLivesTest, GrandchildOfAChildWithoutDirectoryRecordsFromItsCopies) {
  std::string dir = RunAndKill("grandchild", "grandchild");
  ExpectRecorded(dir, {"early", "late"});
  ExpectParentUntouched({"early", "late"});
  std::vector<std::string> child = FieldOf(lines_, "child");
  ASSERT_EQ(child.size(), 1u);
  std::string child_dir = root_.DirectoryOf(static_cast<pid_t>(std::stol(child[0])));
  ASSERT_FALSE(child_dir.empty()) << "the child exited: it writes its directory";
  RecordingReader reader(child_dir);
  ASSERT_TRUE(reader.session().has_value());
  EXPECT_EQ(reader.session()->state, format::kSessionExited);
  EXPECT_NE(FindBlock(reader, Address("known")), nullptr);
  EXPECT_EQ(FindBlock(reader, Address("early")), nullptr) << "the grandchild's block";
  EXPECT_EQ(root_.Entries().size(), 3u);
  EXPECT_TRUE(stderr_.empty()) << stderr_;
}

}  // namespace
}  // namespace heapgraph::proctest
