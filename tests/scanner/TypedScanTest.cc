// tests/scanner: TypedScan in this process, through a real memfd: a make_shared pair pointing at
// each other and a plain block; nothing marked (all "leaked"). The typed objects, the references
// between them with word offsets, and the untyped per-size counts come back through ReadFrom.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "scanner/TypedScan.h"
#include "scanner/types/BuiltInReaders.h"

namespace heapgraph::scanner {
namespace {

struct Peer {
  std::shared_ptr<Peer> other;
  long pad[3] = {};
};

void* ControlOf(const std::shared_ptr<Peer>& p) {
  return reinterpret_cast<void* const*>(&p)[1];
}

// Sorts `blocks` by address and writes their typed scan to a memfd with nothing marked (every
// block leaked, in address order), then reads it back.
TypedScanResult WriteAndRead(std::vector<LeakedBlock>& blocks, const types::ReaderSet& readers) {
  std::sort(blocks.begin(), blocks.end(),
            [](const LeakedBlock& x, const LeakedBlock& y) { return x.address < y.address; });
  std::vector<BlockRange, MmapAllocator<BlockRange>> ranges;
  for (const LeakedBlock& l : blocks) ranges.push_back({l.address, l.size});
  BlockIndex index(std::move(ranges));
  HeapMarker marker(index);
  std::vector<uint32_t> leaked_index(blocks.size());
  for (uint32_t i = 0; i < leaked_index.size(); ++i) leaked_index[i] = i;
  roots::ProcessMappings mappings;
  EXPECT_TRUE(mappings.Read());
  RootRanges roots;
  TypedScanResult result;
  int fd = static_cast<int>(syscall(SYS_memfd_create, "typed-scan-test", 0));
  EXPECT_GE(fd, 0);
  if (fd < 0) return result;
  EXPECT_TRUE(TypedScan::WriteTo(
      fd, {index, marker, blocks, leaked_index, readers, mappings, roots, {}, 0}));
  std::string error;
  EXPECT_TRUE(TypedScan::ReadFrom(fd, &result, &error)) << error;
  close(fd);
  return result;
}

TEST(TypedScanTest, WritesAndReadsTypedObjectsAndReferences) {
  auto a = std::make_shared<Peer>();
  auto b = std::make_shared<Peer>();
  a->other = b;
  b->other = a;
  auto* plain = new char[48];
  uint64_t size = 16 + sizeof(Peer);
  std::vector<LeakedBlock> blocks = {{reinterpret_cast<uint64_t>(ControlOf(a)), size, 1, 1},
                                     {reinterpret_cast<uint64_t>(ControlOf(b)), size, 2, 2},
                                     {reinterpret_cast<uint64_t>(plain), 48, 3, 3}};
  types::ReaderSet readers;
  types::RegisterBuiltInReaders(readers);
  readers.Prepare();
  TypedScanResult result = WriteAndRead(blocks, readers);

  ASSERT_EQ(result.objects.size(), 2u);
  for (const TypedObject& o : result.objects) {
    EXPECT_EQ(o.identity.model, types::ObjectModel::kSharedPtrControl);
    EXPECT_EQ(o.leaked, 1);
    EXPECT_EQ(o.size, size);
  }
  // Each Peer's shared_ptr: element word at +16 (into the other block at +16), control block
  // word at +24 (the other block's start).
  ASSERT_EQ(result.edges.size(), 4u);
  for (const TypedEdge& e : result.edges) {
    EXPECT_NE(e.from, e.to);
    EXPECT_EQ(e.target_offset, e.offset == 16 ? 16u : 0u);
    EXPECT_TRUE(e.offset == 16 || e.offset == 24);
  }
  ASSERT_EQ(result.untyped.size(), 1u);
  EXPECT_EQ(result.untyped[0].size_key, 48u);
  EXPECT_EQ(result.untyped[0].live_count, 1u);
  EXPECT_EQ(result.untyped[0].leaked_bytes, 48u);
  EXPECT_TRUE(result.paths.empty());  // nothing reachable
  EXPECT_TRUE(result.enabled);
  a->other.reset();
  delete[] plain;
}

// Untyped blocks are counted per size: sizes below 4 KiB in ascending order whatever order the
// blocks came in, then larger sizes merged and sorted, then mappings (size key UINT64_MAX).
TEST(TypedScanTest, CountsUntypedBlocksPerSizeInAscendingOrder) {
  const uint64_t sizes[] = {4000, 24, 9000, 24, 4095, 16, 9000, 4096};
  std::vector<std::unique_ptr<char[]>> owned;
  std::vector<LeakedBlock> blocks;
  for (uint64_t size : sizes) {
    owned.push_back(std::make_unique<char[]>(size));
    blocks.push_back({reinterpret_cast<uint64_t>(owned.back().get()), size, 1, 1});
  }
  types::ReaderSet readers;  // no reader: every block is untyped
  TypedScanResult result = WriteAndRead(blocks, readers);

  const uint64_t keys[] = {16, 24, 4000, 4095, 4096, 9000};
  const uint64_t counts[] = {1, 2, 1, 1, 1, 2};
  ASSERT_EQ(result.untyped.size(), std::size(keys));
  for (size_t i = 0; i < std::size(keys); ++i) {
    EXPECT_EQ(result.untyped[i].size_key, keys[i]) << i;
    EXPECT_EQ(result.untyped[i].live_count, counts[i]) << i;
    EXPECT_EQ(result.untyped[i].leaked_bytes, counts[i] * keys[i]) << i;
  }
}

TEST(TypedScanTest, ReadFromRejectsAnEmptyResult) {
  int fd = static_cast<int>(syscall(SYS_memfd_create, "typed-scan-empty", 0));
  TypedScanResult result;
  std::string error;
  EXPECT_FALSE(TypedScan::ReadFrom(fd, &result, &error));
  EXPECT_FALSE(error.empty());
  close(fd);
}

}  // namespace
}  // namespace heapgraph::scanner
