// tests/scanner/types: SnapshotMemory reads only inside live blocks and mapped module segments;
// ModuleSegments sees this process's modules with their read-only (RELRO included), code and
// writable parts.
#include <gtest/gtest.h>

#include <typeinfo>

#include "scanner/types/SnapshotMemory.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

const char kReadOnly[] = "read-only data";
int g_writable = 7;

__attribute__((noinline)) int HelperInCode() {
  return g_writable;
}

struct Poly {
  virtual ~Poly() = default;
};

TEST(SnapshotMemoryTest, ReadsInsideBlocksAndSegmentsOnly) {
  auto* block = new uint64_t[4]{1, 2, 3, 4};
  test::Blocks blocks({test::Range(block, 32)});
  const SnapshotMemory& m = *blocks.memory;
  uint64_t word = 0;
  EXPECT_TRUE(m.ReadWord(reinterpret_cast<uint64_t>(block + 3), &word));
  EXPECT_EQ(word, 4u);
  EXPECT_FALSE(m.ReadWord(reinterpret_cast<uint64_t>(block + 3) + 4, &word));  // crosses the end
  EXPECT_FALSE(m.ReadWord(reinterpret_cast<uint64_t>(&word), &word));          // the stack
  EXPECT_FALSE(m.ReadWord(0, &word));
  EXPECT_FALSE(m.ReadWord(UINT64_MAX - 3, &word));
  char text[sizeof(kReadOnly)] = {};
  EXPECT_TRUE(m.Read(reinterpret_cast<uint64_t>(kReadOnly), text, sizeof(text)));
  EXPECT_STREQ(text, kReadOnly);
  EXPECT_TRUE(m.InReadOnlyData(reinterpret_cast<uint64_t>(kReadOnly)));
  EXPECT_FALSE(m.InReadOnlyData(reinterpret_cast<uint64_t>(&g_writable)));
  EXPECT_TRUE(m.InCode(reinterpret_cast<uint64_t>(&HelperInCode)));
  delete[] block;
}

TEST(SnapshotMemoryTest, VtablesAndTypeinfoAreReadOnly) {
  Poly* p = new Poly;
  test::Blocks blocks({test::Range(p)});
  uint64_t vptr = *reinterpret_cast<uint64_t*>(p);
  EXPECT_TRUE(blocks.memory->InReadOnlyData(vptr - 16, 16));  // .data.rel.ro after RELRO
  EXPECT_NE(blocks.modules.Find(reinterpret_cast<uint64_t>(&typeid(Poly))), nullptr);
  const Segment* data = blocks.modules.Find(reinterpret_cast<uint64_t>(&g_writable));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->kind, SegmentKind::kWritable);
  EXPECT_FALSE(blocks.modules.modules()[data->module].path.empty());
  delete p;
}

TEST(SnapshotMemoryTest, UnmappedSegmentsAreNeverRead) {
  ModuleSegments modules;
  modules.Add(reinterpret_cast<uint64_t>(kReadOnly), reinterpret_cast<uint64_t>(kReadOnly) + 8,
              SegmentKind::kReadOnly);
  BlockIndex index({});
  roots::ProcessMappings none;  // the snapshot's map shows nothing
  SnapshotMemory m(index, modules, none);
  uint64_t word;
  EXPECT_FALSE(m.ReadWord(reinterpret_cast<uint64_t>(kReadOnly), &word));
  SnapshotMemory live(index, modules);
  EXPECT_TRUE(live.ReadWord(reinterpret_cast<uint64_t>(kReadOnly), &word));
}

}  // namespace
}  // namespace heapgraph::scanner::types
