// tests/scanner/types: real objects of this test process as the "snapshot" the type readers read:
// a BlockIndex over given blocks and the process's own module segments (all taken as mapped).
#pragma once

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "scanner/BlockIndex.h"
#include "scanner/types/ModuleSegments.h"
#include "scanner/types/ObjectModelReader.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner::types::test {

struct Blocks {
  std::vector<BlockRange> ranges;
  ModuleSegments modules;
  std::unique_ptr<BlockIndex> index;
  std::unique_ptr<SnapshotMemory> memory;

  // `blocks`: (address, size) of live objects of this process; any order.
  explicit Blocks(std::vector<BlockRange> blocks) : ranges(std::move(blocks)) {
    std::sort(ranges.begin(), ranges.end(),
              [](const BlockRange& a, const BlockRange& b) { return a.begin < b.begin; });
    modules.Collect();
    index = std::make_unique<BlockIndex>(
        std::vector<BlockRange, MmapAllocator<BlockRange>>(ranges.begin(), ranges.end()));
    memory = std::make_unique<SnapshotMemory>(*index, modules);
  }
  uint32_t Of(const void* p) const { return index->FindStart(reinterpret_cast<uint64_t>(p)); }
};

// Keeps every identity a reader assigns, in order.
class RecordingSink : public TypeSink {
 public:
  void Assign(uint32_t block, const TypeIdentity& identity) override {
    assigned.push_back({block, identity});
  }
  std::vector<std::pair<uint32_t, TypeIdentity>> assigned;
};

template <typename T>
BlockRange Range(const T* p, size_t size = sizeof(T)) {
  return {reinterpret_cast<uint64_t>(p), size};
}

}  // namespace heapgraph::scanner::types::test
