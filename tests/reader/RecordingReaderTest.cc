#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "reader/RecordingReader.h"
#include "tests/reader/SyntheticRecording.h"

namespace heapgraph {
namespace {

using format::AllocFunction;
using synthetic::Files;
using synthetic::Patch;
using synthetic::SyntheticRecording;

constexpr uint64_t kFooBias = 0x7f0000000000;
constexpr uint64_t kExeBias = 0x555500000000;
constexpr uint64_t kFooAlloc = kFooBias + 0x1234;
constexpr uint64_t kFooOther = kFooBias + 0x2000;
constexpr uint64_t kExeMain = kExeBias + 0x1000;
constexpr uint64_t kVmAddress = 0x7e0000000000;

// The standard recording: three stacks sharing an outer frame, two modules, heap blocks in both
// shards, one mmap in vm.tree, a session.
struct Standard {
  SyntheticRecording rec;
  uint32_t s1 = 0, s2 = 0, s3 = 0;

  Standard() {
    s1 = rec.AddStack({kFooAlloc, kExeMain});
    s2 = rec.AddStack({kFooOther, kExeMain});
    s3 = rec.AddStack({kExeMain + 0x40});
    rec.AddModule("/usr/lib/libfoo.so", kFooBias, kFooBias, kFooBias + 0x10000, {0xab, 0xcd, 1, 2});
    rec.AddModule("/usr/bin/app", kExeBias, kExeBias, kExeBias + 0x10000, {});
    rec.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, s1, 1);
    rec.AddBlock(TreeKind::kHeap, 0x2000, 48, AllocFunction::kCalloc, s1, 2);
    rec.AddBlock(TreeKind::kHeap, 0x3000, 48, AllocFunction::kMalloc, s1, 3);
    rec.AddBlock(TreeKind::kHeap, 0x4000, 49152, AllocFunction::kRealloc, s2, 4);
    rec.AddBlock(TreeKind::kHeap, 0x5000, 48, AllocFunction::kMalloc, s2, 5);
    rec.AddBlock(TreeKind::kHeap, 0x6000, 48, AllocFunction::kMalloc, s2, 6);
    rec.AddBlock(TreeKind::kHeap, 0x7000, 100, AllocFunction::kMalloc, 0, 7);
    rec.AddBlock(TreeKind::kHeap, 0x8000, 50, AllocFunction::kMalloc, s3, 8);
    rec.AddBlock(TreeKind::kHeap, 0x9000, 50, AllocFunction::kMalloc, s3, 9);
    rec.AddBlock(TreeKind::kVm, kVmAddress, 8 << 20, AllocFunction::kMmap, s1, 10);
    rec.SetSession(4321, "/usr/bin/app");
  }
};

class RecordingReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/reader-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    files_ = standard_.rec.Build();
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Writes `files` into a fresh directory and returns its path.
  std::string WriteDir(const Files& files) {
    std::string dir = root_ + "/" + std::to_string(next_++);
    std::filesystem::create_directory(dir);
    synthetic::WriteFiles(dir, files);
    return dir;
  }

  // Opens `files` and resolves every stack; returns the RecordingError message or "".
  std::string ErrorOf(const Files& files) {
    std::string dir = WriteDir(files);
    std::string message;
    try {
      RecordingReader reader(dir);
      for (const LiveBlock& b : reader.blocks()) reader.Frames(b.stack);
      reader.GroupByStack();
    } catch (const RecordingError& e) {
      message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    std::filesystem::remove_all(dir);
    return message;
  }

  void ExpectError(const Files& files, const std::string& expected) {
    std::string message = ErrorOf(files);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "message: '" << message << "' expected: '" << expected << "'";
  }

  std::string root_;
  int next_ = 0;
  Standard standard_;
  Files files_;
};

TEST_F(RecordingReaderTest, ReadsBlocksFromBothTrees) {
  RecordingReader reader(WriteDir(files_));
  ASSERT_EQ(reader.blocks().size(), 10u);
  EXPECT_EQ(reader.live_bytes(), 48u * 5 + 49152 + 100 + 100 + (8u << 20));
  EXPECT_TRUE(reader.torn().empty());
  EXPECT_EQ(reader.dropped(), 0u);
  ASSERT_EQ(reader.shards().size(), 2u * SyntheticRecording::kShards);
  std::set<uint64_t> addresses;
  for (const LiveBlock& b : reader.blocks()) {
    addresses.insert(b.address);
    EXPECT_EQ(b.shard, (b.address >> SyntheticRecording::kShardShift) & 1) << b.address;
  }
  EXPECT_EQ(addresses.size(), 10u);
  const LiveBlock& vm = reader.blocks().back();
  EXPECT_EQ(vm.tree, TreeKind::kVm);
  EXPECT_EQ(vm.address, kVmAddress);
  EXPECT_EQ(vm.size, 8u << 20);
  EXPECT_EQ(vm.function, AllocFunction::kMmap);
  EXPECT_EQ(vm.stack, standard_.s1);
  EXPECT_EQ(vm.seq, 10u);
}

// A tree written before TreeHeader had shard_group (header_size 48, the field's bytes zero) reads
// as before.
TEST_F(RecordingReaderTest, TreeHeaderWithoutShardGroupIsRead) {
  using format::TreeHeader;
  Files files = files_;
  for (const char* tree : {format::kHeapTreeFile, format::kVmTreeFile}) {
    Patch(files, tree, offsetof(format::FileHeader, header_size),
          static_cast<uint32_t>(offsetof(TreeHeader, shard_group)));
    Patch(files, tree, offsetof(TreeHeader, shard_group), uint32_t{0});
  }
  RecordingReader reader(WriteDir(files));
  EXPECT_EQ(reader.blocks().size(), 10u);
}

TEST_F(RecordingReaderTest, BlockFieldsAreExact) {
  RecordingReader reader(WriteDir(files_));
  bool found = false;
  for (const LiveBlock& b : reader.blocks()) {
    if (b.address != 0x4000) continue;
    found = true;
    EXPECT_EQ(b.size, 49152u);
    EXPECT_EQ(b.function, AllocFunction::kRealloc);
    EXPECT_EQ(b.stack, standard_.s2);
    EXPECT_EQ(b.seq, 4u);
    EXPECT_EQ(b.shard, 0u);
    EXPECT_EQ(b.tree, TreeKind::kHeap);
  }
  EXPECT_TRUE(found);
}

TEST_F(RecordingReaderTest, GroupsByStackAndCategoryLargestFirst) {
  RecordingReader reader(WriteDir(files_));
  std::vector<StackGroup> groups = reader.GroupByStack();
  ASSERT_EQ(groups.size(), 6u);
  auto expect = [&](size_t i, uint32_t stack, uint64_t count, uint64_t bytes, const char* cat) {
    EXPECT_EQ(groups[i].stack, stack) << i;
    EXPECT_EQ(groups[i].count, count) << i;
    EXPECT_EQ(groups[i].bytes, bytes) << i;
    EXPECT_EQ(groups[i].category, cat) << i;
  };
  expect(0, standard_.s1, 1, 8 << 20, "VM: anonymous");
  expect(1, standard_.s2, 1, 49152, "Malloc 48.00KiB");
  expect(2, standard_.s1, 3, 144, "Malloc 48 B");
  expect(3, standard_.s3, 2, 100, "Malloc 50 B");  // ties on bytes: more blocks first
  expect(4, 0, 1, 100, "Malloc 100 B");
  expect(5, standard_.s2, 2, 96, "Malloc 48 B");
}

TEST(CategoryNameTest, FormatsSizesLikeTheSeed) {
  EXPECT_EQ(CategoryName(AllocFunction::kMalloc, 0), "Malloc 0 B");
  EXPECT_EQ(CategoryName(AllocFunction::kMalloc, 48), "Malloc 48 B");
  EXPECT_EQ(CategoryName(AllocFunction::kCalloc, 1023), "Malloc 1023 B");
  EXPECT_EQ(CategoryName(AllocFunction::kMalloc, 1024), "Malloc 1.00KiB");
  EXPECT_EQ(CategoryName(AllocFunction::kMalloc, 48 * 1024), "Malloc 48.00KiB");
  EXPECT_EQ(CategoryName(AllocFunction::kMalloc, 8 << 20), "Malloc 8.00MiB");
  EXPECT_EQ(CategoryName(AllocFunction::kPosixMemalign, 3ull << 29), "Malloc 1.50GiB");
  EXPECT_EQ(CategoryName(AllocFunction::kMmap, 4096), "VM: anonymous");
  EXPECT_EQ(CategoryName(AllocFunction::kMremap, 1), "VM: anonymous");
}

TEST_F(RecordingReaderTest, ResolvesStacksInnermostFirstWithSharedSuffix) {
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.Frames(standard_.s1), (std::vector<uint64_t>{kFooAlloc, kExeMain}));
  EXPECT_EQ(reader.Frames(standard_.s2), (std::vector<uint64_t>{kFooOther, kExeMain}));
  EXPECT_EQ(reader.Frames(standard_.s3), (std::vector<uint64_t>{kExeMain + 0x40}));
  EXPECT_TRUE(reader.Frames(0).empty());
  const StackStats& stats = reader.stack_stats();
  EXPECT_EQ(stats.node_count, 4u);  // the outer frame is shared
  EXPECT_EQ(stats.slots, 1024u);
  EXPECT_EQ(stats.max_depth, SyntheticRecording::kMaxDepth);
  EXPECT_EQ(stats.prefix_count, 3u);
  EXPECT_EQ(stats.dropped, 0u);
}

TEST_F(RecordingReaderTest, ReturnAddressesAreEveryNodeOnceAscending) {
  RecordingReader reader(WriteDir(files_));
  // 4 nodes: kExeMain is shared by s1 and s2, so it is listed once.
  std::vector<uint64_t> expected = {kFooAlloc, kFooOther, kExeMain, kExeMain + 0x40};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(reader.ReturnAddresses(), expected);
  EXPECT_EQ(reader.ReturnAddresses([] { return false; }), expected);
  int polls = 0;
  EXPECT_TRUE(reader.ReturnAddresses([&] { return ++polls > 0; }).empty());  // stops before a chunk
  EXPECT_EQ(polls, 1);
}

TEST_F(RecordingReaderTest, StacksAndModulesOnlySkipsTheTrees) {
  std::string dir = WriteDir(files_);
  RecordingReader reader(dir, RecordingReader::Content::kStacksAndModules);
  EXPECT_TRUE(reader.blocks().empty());
  EXPECT_TRUE(reader.shards().empty());
  EXPECT_EQ(reader.Frames(standard_.s1), (std::vector<uint64_t>{kFooAlloc, kExeMain}));
  EXPECT_EQ(reader.modules().size(), 2u);
  ASSERT_TRUE(reader.Locate(kExeMain).has_value());
  EXPECT_EQ(reader.Locate(kExeMain)->offset, 0x1000u);
  std::filesystem::remove(std::filesystem::path(dir) / format::kHeapTreeFile);
  EXPECT_THROW(RecordingReader(dir, RecordingReader::Content::kStacksAndModules), RecordingError);
}

TEST_F(RecordingReaderTest, ReadsModulesAndLocatesAddresses) {
  RecordingReader reader(WriteDir(files_));
  ASSERT_EQ(reader.modules().size(), 2u);
  EXPECT_STREQ(reader.modules()[0].path, "/usr/lib/libfoo.so");
  EXPECT_EQ(reader.modules()[0].build_id_len, 4u);
  std::optional<ModuleLocation> foo = reader.Locate(kFooAlloc);
  ASSERT_TRUE(foo.has_value());
  EXPECT_EQ(foo->module, 0u);
  EXPECT_EQ(foo->offset, 0x1234u);
  std::optional<ModuleLocation> exe = reader.Locate(kExeMain);
  ASSERT_TRUE(exe.has_value());
  EXPECT_EQ(exe->module, 1u);
  EXPECT_EQ(exe->offset, 0x1000u);
  EXPECT_FALSE(reader.Locate(kFooBias + 0x10000).has_value());  // end is exclusive
  EXPECT_FALSE(reader.Locate(0x1000).has_value());
}

TEST_F(RecordingReaderTest, LocatePrefersLoadedModules) {
  Standard s;
  s.rec.AddModule("/old.so", 0x10000000, 0x10000000, 0x10010000, {}, format::kModuleUnloaded);
  s.rec.AddModule("/new.so", 0x10000000, 0x10000000, 0x10010000, {}, format::kModuleLoaded);
  s.rec.AddModule("/newer-but-gone.so", 0x10000000, 0x10000000, 0x10010000, {},
                  format::kModuleUnloaded);
  RecordingReader reader(WriteDir(s.rec.Build()));
  std::optional<ModuleLocation> where = reader.Locate(0x10000010);
  ASSERT_TRUE(where.has_value());
  EXPECT_STREQ(reader.modules()[where->module].path, "/new.so");
  EXPECT_EQ(where->offset, 0x10u);
}

TEST_F(RecordingReaderTest, ReadsSession) {
  RecordingReader reader(WriteDir(files_));
  ASSERT_TRUE(reader.session().has_value());
  EXPECT_EQ(reader.session()->pid, 4321);
  EXPECT_EQ(reader.session()->executable, "/usr/bin/app");
  EXPECT_EQ(reader.session()->state, format::kSessionExited);
  EXPECT_EQ(reader.session()->sequence, 42u);
  EXPECT_TRUE(reader.warnings().empty());
}

TEST_F(RecordingReaderTest, MissingSessionAndVmTreeAreWarnings) {
  files_.erase(format::kSessionFile);
  files_.erase(format::kVmTreeFile);
  RecordingReader reader(WriteDir(files_));
  EXPECT_FALSE(reader.session().has_value());
  EXPECT_EQ(reader.blocks().size(), 9u);
  ASSERT_EQ(reader.warnings().size(), 2u);
  EXPECT_EQ(reader.warnings()[0].rfind("vm.tree: missing", 0), 0u);
  EXPECT_EQ(reader.warnings()[1], "session: missing");
}

TEST_F(RecordingReaderTest, ReportsMarkedTornNodeWithoutReadingIt) {
  // The writer died while changing the slot of block 0x2000 (shard 0).
  SyntheticRecording::NodeRef ref = standard_.rec.Locate(TreeKind::kHeap, 0x2000);
  ASSERT_EQ(ref.shard, 0u);
  Patch(files_, format::kHeapTreeFile,
        SyntheticRecording::ShardHeaderOffset(0) + offsetof(format::HashShardHeader, writing),
        uint32_t{ref.index + 1});
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.blocks().size(), 9u);
  for (const LiveBlock& b : reader.blocks()) EXPECT_NE(b.address, 0x2000u);
  ASSERT_EQ(reader.torn().size(), 1u);
  EXPECT_EQ(reader.torn()[0].tree, TreeKind::kHeap);
  EXPECT_EQ(reader.torn()[0].shard, 0u);
  EXPECT_EQ(reader.torn()[0].index, ref.index);
  EXPECT_EQ(reader.torn()[0].records, 1u);
  EXPECT_TRUE(reader.torn()[0].marked);
}

TEST_F(RecordingReaderTest, ReportsARehashingShardAsTornWithItsRecordCount) {
  // Shard 1 holds 0x1000, 0x3000, 0x5000, 0x7000 and 0x9000; its writer died mid-rehash.
  Patch(files_, format::kHeapTreeFile,
        SyntheticRecording::ShardHeaderOffset(1) + offsetof(format::HashShardHeader, writing),
        format::kRehashing);
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.blocks().size(), 5u);
  for (const LiveBlock& b : reader.blocks())
    EXPECT_FALSE(b.tree == TreeKind::kHeap && b.shard == 1);
  ASSERT_EQ(reader.torn().size(), 1u);
  EXPECT_EQ(reader.torn()[0].tree, TreeKind::kHeap);
  EXPECT_EQ(reader.torn()[0].shard, 1u);
  EXPECT_EQ(reader.torn()[0].index, format::kRehashing);
  EXPECT_EQ(reader.torn()[0].records, 5u);
  EXPECT_TRUE(reader.torn()[0].marked);
}

TEST_F(RecordingReaderTest, ReadsAVersionOneHeapTree) {
  // A splay-layout heap.tree (what recorders before format version 2 wrote) still reads.
  Files files = files_;
  files[format::kHeapTreeFile] = files_[format::kVmTreeFile];
  RecordingReader reader(WriteDir(files));
  EXPECT_EQ(reader.blocks().size(), 2u);
  EXPECT_TRUE(reader.torn().empty());
}

TEST_F(RecordingReaderTest, SkipsInconsistentNodes) {
  SyntheticRecording::NodeRef ref = standard_.rec.Locate(TreeKind::kHeap, 0x2000);
  uint64_t slot = SyntheticRecording::HashSlotOffset(ref.shard, ref.index);
  Patch(files_, format::kHeapTreeFile, slot + offsetof(format::HashSlot, size_function) + 7,
        uint8_t{99});  // the function byte
  // A node that looks free but has an address.
  Patch(files_, format::kVmTreeFile, SyntheticRecording::NodeOffset(1, 3), uint32_t{0x5000});
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.blocks().size(), 9u);
  ASSERT_EQ(reader.torn().size(), 2u);
  EXPECT_FALSE(reader.torn()[0].marked);
  EXPECT_EQ(reader.torn()[0].index, ref.index);
  EXPECT_EQ(reader.torn()[1].tree, TreeKind::kVm);
  EXPECT_EQ(reader.torn()[1].index, 3u);
}

TEST_F(RecordingReaderTest, SkipsInconsistentHashSlots) {
  // An empty-looking slot (address 0) with a size, and a live one with bits 40-55 set.
  SyntheticRecording::NodeRef ref = standard_.rec.Locate(TreeKind::kHeap, 0x3000);
  uint32_t empty = 0;
  while (empty == ref.index || empty == standard_.rec.Locate(TreeKind::kHeap, 0x1000).index ||
         empty == standard_.rec.Locate(TreeKind::kHeap, 0x5000).index ||
         empty == standard_.rec.Locate(TreeKind::kHeap, 0x7000).index ||
         empty == standard_.rec.Locate(TreeKind::kHeap, 0x9000).index) {
    ++empty;
  }
  Patch(files_, format::kHeapTreeFile,
        SyntheticRecording::HashSlotOffset(1, empty) + offsetof(format::HashSlot, size_function),
        uint64_t{48});
  Patch(
      files_, format::kHeapTreeFile,
      SyntheticRecording::HashSlotOffset(1, ref.index) + offsetof(format::HashSlot, size_function),
      format::HashSlot::Pack(48, AllocFunction::kMalloc) | (uint64_t{1} << 44));
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.blocks().size(), 9u);
  ASSERT_EQ(reader.torn().size(), 2u);
  EXPECT_FALSE(reader.torn()[0].marked);
  EXPECT_FALSE(reader.torn()[1].marked);
}

TEST_F(RecordingReaderTest, ReportsDroppedPerShard) {
  Standard s;
  s.rec.SetDropped(TreeKind::kHeap, 1, 5);
  s.rec.SetDropped(TreeKind::kVm, 0, 2);
  RecordingReader reader(WriteDir(s.rec.Build()));
  EXPECT_EQ(reader.dropped(), 7u);
  EXPECT_EQ(reader.shards()[1].dropped, 5u);
  EXPECT_EQ(reader.shards()[2].tree, TreeKind::kVm);
  EXPECT_EQ(reader.shards()[2].dropped, 2u);
  EXPECT_EQ(reader.shards()[0].live_count, 4u);
}

TEST_F(RecordingReaderTest, OddModuleSequenceIsAWarning) {
  Patch(files_, format::kModuleFile, offsetof(format::ModuleHeader, sequence), uint32_t{3});
  // While a writer is active a bad record is dropped, not fatal.
  Patch(files_, format::kModuleFile,
        SyntheticRecording::ModuleRecordOffset(1) + offsetof(format::ModuleRecord, segment_count),
        uint32_t{99});
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.modules().size(), 1u);
  ASSERT_EQ(reader.warnings().size(), 1u);
  EXPECT_EQ(reader.warnings()[0], "modules: torn (writer was active)");
}

TEST_F(RecordingReaderTest, TruncatedFilesAreErrors) {
  for (const auto& [name, bytes] : files_) {
    std::vector<size_t> cuts;
    for (size_t cut = 0; cut < 80 && cut < bytes.size(); ++cut) cuts.push_back(cut);
    for (size_t cut = 80; cut < bytes.size(); cut += 61) cuts.push_back(cut);
    for (size_t edge : {size_t{4095}, size_t{4096}, size_t{4097}, bytes.size() - 1}) {
      if (edge < bytes.size()) cuts.push_back(edge);
    }
    for (size_t cut : cuts) {
      Files files = files_;
      files[name].resize(cut);
      std::string message = ErrorOf(files);
      EXPECT_EQ(message.rfind(name + ": truncated (", 0), 0u)
          << name << " cut at " << cut << ": '" << message << "'";
    }
  }
}

TEST_F(RecordingReaderTest, BadMagicIsNamed) {
  for (const auto& entry : files_) {
    Files files = files_;
    Patch(files, entry.first, 0, uint64_t{0x5858585858585858});
    ExpectError(files, entry.first + ": not a heapgraph file (bad magic)");
  }
  Files files = files_;
  files[format::kHeapTreeFile].replace(0, 8, format::kStackMagic, 8);
  ExpectError(files, "heap.tree: wrong file type (magic HGSTACK1, expected HGTREE01)");
}

TEST_F(RecordingReaderTest, WrongVersionIsNamed) {
  for (const auto& entry : files_) {
    Files files = files_;
    Patch(files, entry.first, offsetof(format::FileHeader, version), uint32_t{7});
    std::string known =
        entry.first == format::kHeapTreeFile ? "1, 2 and 3)"
        : (entry.first == format::kVmTreeFile || entry.first == format::kSessionFile) ? "1 and 2)"
                                                                                      : "1)";
    ExpectError(files, entry.first + ": unsupported format version 7 (this reader knows " + known);
  }
}

// One corrupted header field and the message it must produce.
struct FieldCase {
  const char* file;
  uint64_t offset;
  uint64_t value;
  size_t width;  // 4 or 8 bytes
  const char* expected;
};

TEST_F(RecordingReaderTest, AbsurdHeaderValuesAreRejected) {
  using format::ModuleHeader;
  using format::ShardHeader;
  using format::StackHeader;
  using format::TreeHeader;
  const uint64_t shard1 = SyntheticRecording::ShardHeaderOffset(1);
  const uint64_t record0 = SyntheticRecording::ModuleRecordOffset(0);
  const FieldCase cases[] = {
      {"heap.tree", offsetof(TreeHeader, node_size), 32, 4, "heap.tree: unsupported node size 32"},
      {"heap.tree", offsetof(TreeHeader, shard_count), 0, 4, "corrupt header (shard_count 0)"},
      {"vm.tree", offsetof(TreeHeader, shard_count), 3, 4, "vm.tree: corrupt header (shard_count"},
      {"heap.tree", offsetof(TreeHeader, shard_count), 8192, 4, "(shard_count 8192)"},
      {"heap.tree", offsetof(TreeHeader, shard_shift), 64, 4, "(shard_shift 64)"},
      {"heap.tree", offsetof(TreeHeader, shard_capacity), 0, 8, "(shard_capacity 0)"},
      {"heap.tree", offsetof(TreeHeader, shard_capacity), 1ull << 33, 8, "(shard_capacity"},
      {"heap.tree", offsetof(TreeHeader, shard_capacity), 1ull << 32, 8, "(shard_capacity"},
      {"heap.tree", offsetof(TreeHeader, shard_capacity), 1ull << 31, 8, "heap.tree: truncated"},
      {"vm.tree", offsetof(TreeHeader, shard_capacity), 1ull << 32, 8, "vm.tree: truncated"},
      {"heap.tree", offsetof(TreeHeader, nodes_offset), 100, 8, "(nodes_offset 100)"},
      {"heap.tree", offsetof(TreeHeader, nodes_offset), 0, 8, "(nodes_offset 0)"},
      {"heap.tree", offsetof(TreeHeader, nodes_offset), 1ull << 40, 8, "heap.tree: truncated"},
      {"heap.tree", offsetof(TreeHeader, nodes_offset), ~0ull << 12, 8, "heap.tree: truncated"},
      {"heap.tree", offsetof(format::FileHeader, header_size), 8, 4, "(header_size 8 < 48)"},
      {"heap.tree", offsetof(format::FileHeader, header_size), 1u << 31, 4, "header needs"},
      {"vm.tree", shard1 + offsetof(ShardHeader, used), 9, 4,
       "vm.tree: shard 1 corrupt (used 9 > capacity 8)"},
      {"heap.tree", shard1 + offsetof(format::HashShardHeader, capacity), 9, 8,
       "heap.tree: shard 1 corrupt (capacity 9 > shard_capacity 8)"},
      {"heap.tree", shard1 + offsetof(format::HashShardHeader, live_count), 9, 8,
       "heap.tree: shard 1 corrupt (live_count 9 > capacity 8)"},
      {"heap.tree", shard1 + offsetof(format::HashShardHeader, writing), 9, 4,
       "heap.tree: shard 1 corrupt (writing 9 > capacity 8)"},
      {"vm.tree", shard1 + offsetof(ShardHeader, writing), 99, 4, "shard 1 corrupt (writing 99"},
      {"stacks", offsetof(StackHeader, slot_bits), 9, 4, "stacks: corrupt header (slot_bits 9)"},
      {"stacks", offsetof(StackHeader, slot_bits), 31, 4, "(slot_bits 31)"},
      {"stacks", offsetof(StackHeader, slot_bits), 11, 4, "stacks: truncated (slot table"},
      {"stacks", offsetof(StackHeader, max_depth), 65, 4, "(max_depth 65)"},
      {"stacks", offsetof(StackHeader, prefix_count), 300, 4, "(prefix_count 300)"},
      {"stacks", offsetof(StackHeader, slots_offset), 7, 8, "(slots_offset 7)"},
      {"stacks", offsetof(StackHeader, slots_offset), 4097, 8, "(slots_offset 4097)"},
      {"stacks", offsetof(StackHeader, slots_offset), 1ull << 50, 8, "stacks: truncated"},
      {"stacks", offsetof(StackHeader, slots_offset), ~0ull << 3, 8, "stacks: corrupt ("},
      {"modules", offsetof(ModuleHeader, record_size), 100, 4,
       "modules: unsupported record size 100"},
      {"modules", offsetof(ModuleHeader, capacity), 1, 4,
       "modules: corrupt header (count 2 > capacity 1)"},
      {"modules", offsetof(ModuleHeader, count), 3, 4, "(count 3 > capacity 2)"},
      {"modules", offsetof(ModuleHeader, capacity), ~0u, 4, "modules: truncated"},
      {"modules", record0 + offsetof(format::ModuleRecord, segment_count), 9, 4,
       "modules: corrupt record 0 (segment_count 9)"},
      {"modules", record0 + offsetof(format::ModuleRecord, build_id_len), 33, 4,
       "(build_id_len 33)"},
      {"modules", record0 + offsetof(format::ModuleRecord, state), 0, 4, "(state 0)"},
      {"modules", record0 + offsetof(format::ModuleRecord, start), ~0ull, 8, "(start above end)"},
  };
  for (const FieldCase& c : cases) {
    Files files = files_;
    if (std::string(c.file) == "modules" && c.offset == offsetof(ModuleHeader, capacity) &&
        c.value == ~0u) {
      Patch(files, c.file, offsetof(ModuleHeader, count), uint32_t{~0u});
    }
    if (c.width == 4) {
      Patch(files, c.file, c.offset, static_cast<uint32_t>(c.value));
    } else {
      Patch(files, c.file, c.offset, c.value);
    }
    SCOPED_TRACE(std::string(c.file) + " offset " + std::to_string(c.offset));
    ExpectError(files, c.expected);
  }
}

TEST_F(RecordingReaderTest, OffsetOverflowIsCorruptNotWrapped) {
  using format::TreeHeader;
  // Shard 0 is empty, so shard 1's node array is the first one read: its offset wraps 2^64.
  Files files = files_;
  Patch(files, format::kVmTreeFile, offsetof(TreeHeader, shard_capacity), uint64_t{1} << 32);
  Patch(files, format::kVmTreeFile, offsetof(TreeHeader, nodes_offset), ~uint64_t{0} << 12);
  Patch(files, format::kVmTreeFile,
        SyntheticRecording::ShardHeaderOffset(0) + offsetof(format::ShardHeader, used),
        uint32_t{1});
  ExpectError(files, "vm.tree: corrupt (shard node array lies beyond 2^64)");
  // The same for heap.tree (version 2): shard 0 without a table, shard 1's slots wrap 2^64.
  files = files_;
  Patch(files, format::kHeapTreeFile, offsetof(TreeHeader, shard_capacity), uint64_t{1} << 31);
  Patch(files, format::kHeapTreeFile, offsetof(TreeHeader, nodes_offset), ~uint64_t{0} << 12);
  uint64_t shard0 = SyntheticRecording::ShardHeaderOffset(0);
  Patch(files, format::kHeapTreeFile, shard0 + offsetof(format::HashShardHeader, capacity),
        uint64_t{0});
  Patch(files, format::kHeapTreeFile, shard0 + offsetof(format::HashShardHeader, live_count),
        uint64_t{0});
  ExpectError(files, "heap.tree: corrupt (shard slot array lies beyond 2^64)");
}

TEST_F(RecordingReaderTest, UnterminatedStringsAreRejected) {
  Files files = files_;
  std::string& modules = files[format::kModuleFile];
  uint64_t path = SyntheticRecording::ModuleRecordOffset(0) + offsetof(format::ModuleRecord, path);
  modules.replace(path, format::kMaxModulePath, std::string(format::kMaxModulePath, 'a'));
  ExpectError(files, "modules: corrupt record 0 (path not NUL-terminated)");

  files = files_;
  std::string& session = files[format::kSessionFile];
  uint64_t exe = offsetof(format::SessionHeader, executable);
  session.replace(exe, format::kMaxModulePath, std::string(format::kMaxModulePath, 'x'));
  ExpectError(files, "session: corrupt header (executable not NUL-terminated)");
}

TEST_F(RecordingReaderTest, CorruptStackChainsAreErrors) {
  const uint32_t prefix = 1;  // valid in the standard recording
  struct StackCase {
    uint64_t slot;
    uint64_t node;
    uint32_t stack;  // id put on block 0x1000
    const char* expected;
  };
  const StackCase cases[] = {
      {500, SyntheticRecording::EncodeNode(500, prefix, 0x10), 500,
       "stacks: corrupt node 500 (stack 500 longer than max_depth 16)"},
      {600, SyntheticRecording::EncodeNode(601, prefix, 0x10), 600, "longer than max_depth 16"},
      {700, SyntheticRecording::EncodeNode(0, 0, 0x10), 700,
       "stacks: corrupt node 700 (prefix index 0 not in [1, 3))"},
      {701, SyntheticRecording::EncodeNode(0, 200, 0x10), 701, "(prefix index 200 not in [1, 3))"},
      {702, SyntheticRecording::EncodeNode(5000, prefix, 0x10), 702,
       "stacks: corrupt node 702 (parent 5000 >= slot count 1024)"},
      {703, SyntheticRecording::EncodeNode(704, prefix, 0x10), 703,
       "corrupt node 704 (empty slot)"},
      {0, 0, 5000, "stacks: corrupt node 5000 (stack id >= slot count 1024)"},
      {0, 0, 900, "stacks: corrupt node 900 (empty slot)"},
  };
  for (const StackCase& c : cases) {
    Files files = files_;
    if (c.slot != 0) {
      Patch(files, format::kStackFile, SyntheticRecording::SlotOffset(c.slot), c.node);
    }
    // A two-node cycle: 600 -> 601 -> 600.
    Patch(files, format::kStackFile, SyntheticRecording::SlotOffset(601),
          SyntheticRecording::EncodeNode(600, prefix, 0x20));
    SyntheticRecording::NodeRef ref = standard_.rec.Locate(TreeKind::kHeap, 0x1000);
    Patch(files, format::kHeapTreeFile,
          SyntheticRecording::HashSlotOffset(ref.shard, ref.index) +
              offsetof(format::HashSlot, stack),
          c.stack);
    SCOPED_TRACE(c.expected);
    ExpectError(files, c.expected);
  }
}

TEST_F(RecordingReaderTest, MissingRequiredFilesAreErrors) {
  Files files = files_;
  files.erase(format::kHeapTreeFile);
  std::string dir = WriteDir(files);
  try {
    RecordingReader reader(dir);
    ADD_FAILURE() << "no error";
  } catch (const RecordingError& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": not a recording directory (no heap.tree)");
  }
  for (const char* name : {format::kStackFile, format::kModuleFile}) {
    files = files_;
    files.erase(name);
    ExpectError(files, std::string(name) + ": missing");
  }
  EXPECT_THROW(RecordingReader(root_ + "/does-not-exist"), RecordingError);
  std::string plain = root_ + "/plain-file";
  synthetic::WriteFiles(root_, {{"plain-file", "x"}});
  EXPECT_THROW(RecordingReader{plain}, RecordingError);
}

TEST_F(RecordingReaderTest, RefusesSymlinksAndSpecialFiles) {
  std::string dir = WriteDir(files_);
  std::string stacks = dir + "/" + format::kStackFile;
  std::string elsewhere = root_ + "/real-stacks";
  std::filesystem::rename(stacks, elsewhere);
  std::filesystem::create_symlink(elsewhere, stacks);
  try {
    RecordingReader reader(dir);
    ADD_FAILURE() << "symlink followed";
  } catch (const RecordingError& e) {
    EXPECT_EQ(std::string(e.what()), "stacks: is a symbolic link (refused)");
  }
  std::filesystem::remove(stacks);
  ASSERT_EQ(mkfifo(stacks.c_str(), 0600), 0);  // must not block in open()
  try {
    RecordingReader reader(dir);
    ADD_FAILURE() << "fifo accepted";
  } catch (const RecordingError& e) {
    EXPECT_EQ(std::string(e.what()), "stacks: not a regular file (a FIFO, refused)");
  }
}

TEST_F(RecordingReaderTest, CopiesShareTheStackFile) {
  std::optional<RecordingReader> original(std::in_place, WriteDir(files_));
  RecordingReader copy = *original;
  RecordingReader moved = std::move(*original);
  original.reset();
  EXPECT_EQ(copy.Frames(standard_.s1).size(), 2u);
  EXPECT_EQ(moved.Frames(standard_.s2).size(), 2u);
}

}  // namespace
}  // namespace heapgraph

namespace heapgraph {
namespace {

// heap.tree version 3: the same slots, a sample; estimates scale heap blocks by 1/p(size) and
// leave vm.tree blocks exact.
TEST_F(RecordingReaderTest, SampledHeapTreeIsReadWithItsMeanAndScaled) {
  constexpr uint32_t kMean = 1024;
  Patch(files_, format::kHeapTreeFile, offsetof(format::FileHeader, version),
        format::kSampledTreeVersion);
  Patch(files_, format::kHeapTreeFile, offsetof(format::TreeHeader, sample_mean), kMean);
  RecordingReader reader(WriteDir(files_));
  EXPECT_EQ(reader.sample_mean(), kMean);
  ASSERT_EQ(reader.blocks().size(), 10u);
  SampleEstimate expected(kMean);
  for (uint64_t size : {48, 48, 48, 49152, 48, 48, 100, 50, 50}) expected.Add(size);
  SampleEstimate live = reader.EstimateLive();
  EXPECT_DOUBLE_EQ(live.count(), expected.count() + 1) << "+ the VM region, exact";
  EXPECT_DOUBLE_EQ(live.bytes(), expected.bytes() + (8 << 20));
  EXPECT_DOUBLE_EQ(live.bytes_error(), expected.bytes_error());
  for (const StackGroup& g : reader.GroupByStack()) {
    if (g.category == "VM: anonymous") {
      EXPECT_EQ(g.estimate.mean(), 0u);
      EXPECT_EQ(g.estimate.count(), 1.0);
    } else {
      EXPECT_EQ(g.estimate.mean(), kMean);
      EXPECT_GE(g.estimate.count(), static_cast<double>(g.count));
      if (g.category == "Malloc 48 B") {
        EXPECT_GT(g.estimate.count(), 20.0 * g.count);
      }
    }
  }
}

TEST_F(RecordingReaderTest, SampledTreeWithoutAMeanOrAsVmTreeIsRefused) {
  Files zero = files_;
  Patch(zero, format::kHeapTreeFile, offsetof(format::FileHeader, version),
        format::kSampledTreeVersion);
  ExpectError(zero, "heap.tree: corrupt header (sample_mean 0)");
  Files vm = files_;
  Patch(vm, format::kVmTreeFile, offsetof(format::FileHeader, version),
        format::kSampledTreeVersion);
  ExpectError(vm, "vm.tree: unsupported format version 3 (this reader knows 1 and 2)");
}

}  // namespace
}  // namespace heapgraph
