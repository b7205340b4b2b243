#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "roots/ProcessMappings.h"

namespace heapgraph::roots {
namespace {

using Kind = ProcessMappings::Kind;

constexpr const char* kFixedMaps =
    "55d0c6a00000-55d0c6a02000 r--p 00000000 fd:01 1315084                    /usr/bin/cat\n"
    "55d0c6a02000-55d0c6a07000 r-xp 00002000 fd:01 1315084                    /usr/bin/cat\n"
    "55d0c7e1e000-55d0c7e3f000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 \n"
    "7f1e2c021000-7f1e30000000 ---p 00000000 00:00 0\n"
    "7f1e31000000-7f1e31001000 rw-s 00000000 00:05 42                         /memfd:pool "
    "(deleted)\n"
    "7f1e31200000-7f1e31201000 r--p 00000000 fd:01 77                         /opt/My App/lib "
    "x.so\n"
    "7f1e31400000-7f1e31401000 rw-p 00000000 00:00 0                          [anon:scratch]\n"
    "7ffd5a3c1000-7ffd5a3e2000 rw-p 00000000 00:00 0                          [stack]\n"
    "7ffd5a3f4000-7ffd5a3f8000 r--p 00000000 00:00 0                          [vvar]\n"
    "7ffd5a3f8000-7ffd5a3fa000 r-xp 00000000 00:00 0                          [vdso]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

TEST(ProcessMappingsTest, ParsesEveryFieldOfFixedText) {
  ProcessMappings maps;
  maps.ParseText(kFixedMaps);
  ASSERT_EQ(maps.mappings().size(), 12u);
  EXPECT_EQ(maps.malformed_lines(), 0u);
  const ProcessMappings::Mapping& text = maps.mappings()[1];
  EXPECT_EQ(text.start, 0x55d0c6a02000u);
  EXPECT_EQ(text.end, 0x55d0c6a07000u);
  EXPECT_EQ(text.size(), 0x5000u);
  EXPECT_TRUE(text.readable);
  EXPECT_FALSE(text.writable);
  EXPECT_TRUE(text.executable);
  EXPECT_FALSE(text.shared);
  EXPECT_EQ(text.offset, 0x2000u);
  EXPECT_EQ(text.dev_major, 0xfdu);
  EXPECT_EQ(text.dev_minor, 1u);
  EXPECT_EQ(text.inode, 1315084u);
  EXPECT_EQ(text.name, "/usr/bin/cat");
  EXPECT_EQ(text.kind, Kind::kFile);
  EXPECT_TRUE(maps.mappings()[5].shared);
  EXPECT_EQ(maps.mappings()[5].name, "/memfd:pool (deleted)");
  EXPECT_EQ(maps.mappings()[6].name, "/opt/My App/lib x.so");  // blanks inside the name
  EXPECT_EQ(maps.mappings()[11].start, 0xffffffffff600000u);
}

TEST(ProcessMappingsTest, ClassifiesStackHeapAnonymousFileAndSpecial) {
  ProcessMappings maps;
  maps.ParseText(kFixedMaps);
  const Kind expected[] = {Kind::kFile,      Kind::kFile,    Kind::kHeap,    Kind::kAnonymous,
                           Kind::kAnonymous, Kind::kFile,    Kind::kFile,    Kind::kAnonymous,
                           Kind::kMainStack, Kind::kSpecial, Kind::kSpecial, Kind::kSpecial};
  ASSERT_EQ(maps.mappings().size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(maps.mappings()[i].kind, expected[i]) << "line " << i;
  }
  EXPECT_TRUE(maps.mappings()[3].name.empty());
  ASSERT_NE(maps.MainStack(), nullptr);
  EXPECT_EQ(maps.MainStack()->start, 0x7ffd5a3c1000u);
  EXPECT_EQ(ProcessMappings::Classify("[vvar_vclock]", 0), Kind::kSpecial);
  EXPECT_EQ(ProcessMappings::Classify("", 12), Kind::kFile);
}

TEST(ProcessMappingsTest, SkipsAndCountsMalformedLines) {
  std::string text(kFixedMaps);
  text +=
      "garbage\n"
      "7f00-7e00 rw-p 00000000 00:00 0\n"           // start > end
      "7f00-7f10 rwzp 00000000 00:00 0\n"           // bad permission
      "7f00-7f10 rw-p 0000zz00 00:00 0\n"           // bad offset
      "7f00-7f10 rw-p 00000000 0000 0\n"            // bad device
      "7f00-7f10 rw-p 00000000 00:00\n"             // no inode
      "7f00-7f10 rw-p 00000000 00:00 12x [heap]\n"  // junk after inode
      "1ffffffffffffffff-2 rw-p 0 00:00 0\n"        // overflow
      "\n"                                          // blank: not counted
      "7f00-7f10 rw-p";                             // truncated, no newline
  ProcessMappings maps;
  maps.ParseText(text);
  EXPECT_EQ(maps.mappings().size(), 12u);
  EXPECT_EQ(maps.malformed_lines(), 9u);
}

TEST(ProcessMappingsTest, FindUsesHalfOpenRangesAndSortsInput) {
  ProcessMappings maps;
  maps.ParseText(
      "3000-4000 rw-p 00000000 00:00 0\n"
      "1000-2000 r--p 00000000 00:00 0\n");
  ASSERT_EQ(maps.mappings().size(), 2u);
  EXPECT_EQ(maps.mappings()[0].start, 0x1000u);
  ASSERT_NE(maps.Find(0x1000), nullptr);
  EXPECT_EQ(maps.Find(0x1fff)->start, 0x1000u);
  EXPECT_EQ(maps.Find(0x2000), nullptr);  // the gap
  EXPECT_EQ(maps.Find(0x3fff)->start, 0x3000u);
  EXPECT_EQ(maps.Find(0x4000), nullptr);
  EXPECT_EQ(maps.Find(0), nullptr);
}

int g_global_in_data = 7;

// The scan's kept page pool is taken out of the map this way: covered mappings go, overlapped ones
// shrink (a file mapping's offset follows its start), one holding a range is split in two.
TEST(ProcessMappingsTest, CutRemovesShrinksAndSplitsMappings) {
  ProcessMappings maps;
  maps.ParseText(kFixedMaps);
  const std::pair<uint64_t, uint64_t> cuts[] = {
      {0x7f1e2c000000, 0x7f1e2c021000},  // the whole anonymous mapping
      {0x55d0c6a01000, 0x55d0c6a03000},  // the end of one file mapping, the start of the next
      {0x55d0c7e20000, 0x55d0c7e21000},  // inside [heap]: split
      {0x1000, 0x1000},                  // empty: ignored
  };
  ASSERT_TRUE(maps.Cut(cuts)) << maps.error();
  auto m = maps.mappings();
  ASSERT_EQ(m.size(), 12u);
  EXPECT_EQ(m[0].start, 0x55d0c6a00000u);
  EXPECT_EQ(m[0].end, 0x55d0c6a01000u);
  EXPECT_EQ(m[1].start, 0x55d0c6a03000u);
  EXPECT_EQ(m[1].offset, 0x3000u);
  EXPECT_EQ(m[2].start, 0x55d0c7e1e000u);
  EXPECT_EQ(m[2].end, 0x55d0c7e20000u);
  EXPECT_EQ(m[3].start, 0x55d0c7e21000u);
  EXPECT_EQ(m[3].end, 0x55d0c7e3f000u);
  EXPECT_EQ(m[3].kind, Kind::kHeap);
  EXPECT_EQ(m[4].start, 0x7f1e2c021000u);  // the anonymous mapping is gone
  EXPECT_EQ(maps.Find(0x7f1e2c000000), nullptr);
  // Splits until the reserve is full: then refused, not grown (ParseText's growth may have left
  // room for a few).
  bool refused = false;
  size_t size = maps.mappings().size();
  for (uint64_t page = 0x7ffd5a3c2000; page < 0x7ffd5a3e0000 && !refused; page += 0x2000) {
    const std::pair<uint64_t, uint64_t> split[] = {{page, page + 0x1000}};
    refused = !maps.Cut(split);
    if (!refused) {
      EXPECT_EQ(maps.mappings().size(), ++size);
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(maps.mappings().size(), size);
}

TEST(ProcessMappingsTest, ReadsTheLiveProcess) {
  ProcessMappings maps;
  ASSERT_TRUE(maps.Read()) << maps.error();
  EXPECT_GT(maps.mappings().size(), 10u);
  EXPECT_EQ(maps.malformed_lines(), 0u);
  int local = 0;
  const ProcessMappings::Mapping* stack = maps.Find(reinterpret_cast<uintptr_t>(&local));
  ASSERT_NE(stack, nullptr);  // gtest runs tests on the main thread
  EXPECT_EQ(stack->kind, Kind::kMainStack);
  EXPECT_TRUE(stack->writable);
  const ProcessMappings::Mapping* data = maps.Find(reinterpret_cast<uintptr_t>(&g_global_in_data));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->kind, Kind::kFile);
  EXPECT_EQ(data->name, std::filesystem::read_symlink("/proc/self/exe").string());
  const auto code = reinterpret_cast<uintptr_t>(&std::abort);
  ASSERT_NE(maps.Find(code), nullptr);
  EXPECT_TRUE(maps.Find(code)->executable);
  auto block = std::make_unique<char[]>(64);
  const ProcessMappings::Mapping* heap = maps.Find(reinterpret_cast<uintptr_t>(block.get()));
  ASSERT_NE(heap, nullptr);
  EXPECT_TRUE(heap->kind == Kind::kHeap || heap->kind == Kind::kAnonymous);
  for (size_t i = 1; i < maps.mappings().size(); ++i) {
    EXPECT_LE(maps.mappings()[i - 1].end, maps.mappings()[i].start);
  }
}

TEST(ProcessMappingsTest, ReadsWithoutAllocatingWithinTheReserve) {
  ProcessMappings maps;
  maps.Reserve(1 << 20, 4096);
  ASSERT_TRUE(maps.ReadWithoutAllocating()) << maps.error();
  int local = 0;
  EXPECT_NE(maps.Find(reinterpret_cast<uintptr_t>(&local)), nullptr);

  ProcessMappings tiny;
  tiny.Reserve(128, 4);
  EXPECT_FALSE(tiny.ReadWithoutAllocating());
  EXPECT_STREQ(tiny.error(), "maps text exceeds the reserved buffer");
}

TEST(ProcessMappingsTest, ReadOfAMissingProcessFails) {
  ProcessMappings maps;
  EXPECT_FALSE(maps.Read(0x3fffffff));
  EXPECT_STREQ(maps.error(), "cannot open the maps file");
}

}  // namespace
}  // namespace heapgraph::roots
