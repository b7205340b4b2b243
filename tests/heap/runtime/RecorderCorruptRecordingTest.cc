// RecordingReader and `heapgraph dump` on a REAL recording (of tests/programs/hg_simple.cc) that
// was then truncated or had header bytes flipped: each either still reads or fails with a
// RecordingError whose message is one line (the CLI: exit status 2 and one "heapgraph: " line on
// stderr), never a crash. Cuts inside the bytes the reader needs must fail.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>

#include "heap/store/PersistedFormat.h"
#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

namespace fs = std::filesystem;

// Small files, so that rewriting them for every case stays cheap.
constexpr char kCorruptOptions[] = "shards=4,shard_capacity_log2=10,stack_slots_log2=16";
constexpr uint64_t kHeaderBytesToFlip = 128;
constexpr size_t kCliCases = 48;  // the CLI runs for the first must-fail cases only

const char* const kFiles[] = {format::kHeapTreeFile, format::kVmTreeFile, format::kStackFile,
                              format::kModuleFile, format::kSessionFile};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Overwrites one byte of a file in place.
bool PatchByte(const std::string& path, uint64_t offset, char value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = pwrite(fd, &value, 1, static_cast<off_t>(offset)) == 1;
  close(fd);
  return ok;
}

template <typename T>
void CopyHeader(const std::string& bytes, T* out) {
  memcpy(static_cast<void*>(out), bytes.data(), std::min(sizeof(T), bytes.size()));
}

uint32_t HeaderSize(const std::string& bytes) {
  format::FileHeader file;
  CopyHeader(bytes, &file);
  return file.header_size;
}

// What happened when a recording was read: "" when it read (and every stack decoded or failed
// cleanly), else the RecordingError message.
std::string ReadOutcome(const std::string& dir) {
  try {
    RecordingReader reader(dir);
    for (const LiveBlock& block : reader.blocks()) {
      try {
        reader.Frames(block.stack);
      } catch (const RecordingError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      }
    }
    reader.GroupByStack();
    return "";
  } catch (const RecordingError& e) {
    std::string message = e.what();
    return message.empty() ? "(empty message)" : message;
  }
}

class RecorderCorruptRecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RunResult run =
        RunToExit(ProgramPath("hg_simple"), {}, RecordingEnv(root_.path(), kCorruptOptions));
    ASSERT_TRUE(run.status && WIFEXITED(*run.status) && WEXITSTATUS(*run.status) == 0)
        << run.stderr_text;
    std::vector<std::string> entries = root_.Entries();
    ASSERT_EQ(entries.size(), 1u);
    pristine_ = root_.path() + "/" + entries[0];
    scratch_ = root_.path() + "/scratch";
    fs::copy(pristine_, scratch_);
    ASSERT_EQ(ReadOutcome(scratch_), "") << "the real recording itself does not read";
    for (const char* name : kFiles) original_[name] = ReadAll(pristine_ + "/" + name);
  }

  std::string Path(const std::string& name) const { return scratch_ + "/" + name; }
  void Restore(const std::string& name) { WriteAll(Path(name), original_[name]); }

  // Bytes of `name` the reader must have; a cut below this must fail.
  uint64_t RequiredBytes(const std::string& name) {
    const std::string& bytes = original_[name];
    if (name == format::kStackFile) return bytes.size();  // the whole slot table is checked
    if (name == format::kModuleFile) {
      format::ModuleHeader h;
      CopyHeader(bytes, &h);
      return h.file.header_size + uint64_t{h.count.load()} * sizeof(format::ModuleRecord);
    }
    if (name == format::kHeapTreeFile || name == format::kVmTreeFile) return TreeBytes(bytes);
    return HeaderSize(bytes);
  }

  // Header plus every node up to the last used one of the last shard that has any (version 1),
  // or every slot of the last shard that has a table (version 2).
  static uint64_t TreeBytes(const std::string& bytes) {
    format::TreeHeader h;
    CopyHeader(bytes, &h);
    uint64_t required = h.nodes_offset;
    for (uint32_t s = 0; s < h.shard_count; ++s) {
      if (h.file.version == format::kHashTreeVersion) {
        format::HashShardHeader shard;
        memcpy(static_cast<void*>(&shard), bytes.data() + 64 + s * sizeof(shard), sizeof(shard));
        uint64_t end =
            h.nodes_offset + (s * h.shard_capacity + shard.capacity) * sizeof(format::HashSlot);
        if (shard.capacity > 0) required = std::max(required, end);
        continue;
      }
      format::ShardHeader shard;
      memcpy(static_cast<void*>(&shard), bytes.data() + 64 + s * sizeof(shard), sizeof(shard));
      uint64_t end =
          h.nodes_offset + (s * h.shard_capacity + shard.used) * sizeof(format::TreeNode);
      if (shard.used > 1) required = std::max(required, end);
    }
    return required;
  }

  // Reads the scratch copy: a one-line error, or success when `must_fail` is false.
  void ExpectCleanOutcome(bool must_fail, const std::string& what) {
    std::string outcome = ReadOutcome(scratch_);
    EXPECT_EQ(outcome.find('\n'), std::string::npos) << what << ": " << outcome;
    if (!must_fail) return;
    EXPECT_NE(outcome, "") << what << ": read without an error";
    if (cli_runs_++ < kCliCases) ExpectCliFails(what, scratch_);
  }

  // `heapgraph dump DIR`: exit status 2 and exactly one "heapgraph: " line on stderr.
  void ExpectCliFails(const std::string& what, const std::string& dir) {
    if (!fs::exists(HEAPGRAPH_CLI)) return;
    RunResult run = RunToExit(HEAPGRAPH_CLI, {"dump", dir, "--no-symbols"}, {});
    ASSERT_TRUE(run.status.has_value()) << what << ": the CLI hung";
    EXPECT_TRUE(WIFEXITED(*run.status) && WEXITSTATUS(*run.status) == 2)
        << what << ": CLI wait status " << *run.status << "\n"
        << run.stderr_text;
    ASSERT_EQ(run.stderr_lines.size(), 1u) << what << ":\n" << run.stderr_text;
    EXPECT_EQ(run.stderr_lines[0].rfind("heapgraph: ", 0), 0u) << run.stderr_lines[0];
  }

  TempRoot root_;
  std::string pristine_, scratch_;
  std::map<std::string, std::string> original_;
  size_t cli_runs_ = 0;
};

std::set<uint64_t> CutLengths(uint64_t size, uint64_t header_size, uint64_t required) {
  std::set<uint64_t> cuts = {0,
                             1,
                             8,
                             15,
                             16,
                             17,
                             63,
                             64,
                             65,
                             header_size - 1,
                             header_size,
                             header_size + 1,
                             required - 1,
                             required / 2,
                             size / 2,
                             size - 1};
  std::erase_if(cuts, [&](uint64_t n) { return n >= size; });
  return cuts;
}

TEST_F(RecorderCorruptRecordingTest, TruncatedFilesFailWithOneLineErrors) {
  for (const char* name : kFiles) {
    uint64_t size = original_[name].size();
    uint64_t header_size = HeaderSize(original_[name]);
    uint64_t required = RequiredBytes(name);
    ASSERT_LE(required, size) << name;
    for (uint64_t cut : CutLengths(size, header_size, required)) {
      ASSERT_EQ(truncate(Path(name).c_str(), static_cast<off_t>(cut)), 0);
      ExpectCleanOutcome(cut < required, std::string(name) + " cut to " + std::to_string(cut));
      Restore(name);
    }
  }
}

// Magic (bytes 0..7) and version (8..11) are always checked; so are the tree's node_size, the
// module map's record_size and the stack table's slot_bits (16..19; any flip leaves the range).
bool FlipMustFail(const std::string& name, uint64_t offset) {
  return offset < 12 || (offset >= 16 && offset < 20 && name != format::kSessionFile);
}

TEST_F(RecorderCorruptRecordingTest, FlippedHeaderBytesFailWithOneLineErrors) {
  for (const char* name : kFiles) {
    const std::string& bytes = original_[name];
    for (uint64_t offset = 0; offset < std::min<uint64_t>(kHeaderBytesToFlip, bytes.size());
         ++offset) {
      ASSERT_TRUE(PatchByte(Path(name), offset, static_cast<char>(bytes[offset] ^ 0xff)));
      ExpectCleanOutcome(FlipMustFail(name, offset),
                         std::string(name) + " byte " + std::to_string(offset) + " flipped");
      ASSERT_TRUE(PatchByte(Path(name), offset, bytes[offset]));
    }
  }
}

TEST_F(RecorderCorruptRecordingTest, CorruptStackNodesNeverCrashTheReader) {
  std::string bytes = original_[format::kStackFile];
  uint64_t slots = HeaderSize(bytes);
  std::mt19937_64 random(12345);
  for (int round = 0; round < 20; ++round) {
    std::string corrupt = bytes;
    for (int i = 0; i < 200; ++i) {
      uint64_t at = slots + random() % (corrupt.size() - slots);
      corrupt[at] = static_cast<char>(random());
    }
    WriteAll(Path(format::kStackFile), corrupt);
    ExpectCleanOutcome(false, "stack slots scribbled, round " + std::to_string(round));
  }
}

TEST_F(RecorderCorruptRecordingTest, CliReportsOneLineForUnreadableRecordings) {
  if (!fs::exists(HEAPGRAPH_CLI)) GTEST_SKIP() << "the heapgraph CLI is not built yet";
  RunResult healthy = RunToExit(HEAPGRAPH_CLI, {"dump", scratch_, "--no-symbols"}, {});
  ASSERT_TRUE(healthy.status.has_value());
  EXPECT_TRUE(WIFEXITED(*healthy.status) && WEXITSTATUS(*healthy.status) == 0)
      << healthy.stderr_text;
  ASSERT_EQ(truncate(Path(format::kHeapTreeFile).c_str(), 10), 0);
  ExpectCliFails("heap.tree cut to 10", scratch_);
  Restore(format::kHeapTreeFile);
  ASSERT_EQ(unlink(Path(format::kStackFile).c_str()), 0);
  ExpectCliFails("stacks missing", scratch_);
  Restore(format::kStackFile);
  ExpectCliFails("no such directory", root_.path() + "/no-such-recording");
}

}  // namespace
}  // namespace heapgraph::proctest
