// scanner/types/: validated reads of the snapshot child's memory for the type readers. A read
// succeeds only when the whole range lies inside one live heap block (the snapshot's copy-on-write
// image of it) or inside one module segment that the snapshot's /proc/self/maps shows readable
// throughout. Nothing else is ever dereferenced, so a reader following a garbage pointer gets
// false, never a fault. No allocation after construction (runs while the program's threads may
// hold malloc locks). May include heap/, roots/ and scanner/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "roots/ProcessMappings.h"
#include "scanner/BlockIndex.h"
#include "scanner/MmapAllocator.h"
#include "scanner/types/ModuleSegments.h"

namespace heapgraph::scanner::types {

class SnapshotMemory {
 public:
  // `mappings`: the snapshot's map (read in the child). A segment not mapped readable throughout
  // is never read. Allocates one byte per segment with MmapAllocator.
  SnapshotMemory(const BlockIndex& blocks, const ModuleSegments& modules,
                 const roots::ProcessMappings& mappings);
  // For tests in a live process: every segment is taken as mapped.
  SnapshotMemory(const BlockIndex& blocks, const ModuleSegments& modules);

  // Copies [address, address + length) into `out`; false if the range is not entirely inside one
  // live block or one mapped module segment.
  bool Read(uint64_t address, void* out, size_t length) const {
    if (!Readable(address, length)) return false;
    std::memcpy(out, reinterpret_cast<const void*>(address), length);
    return true;
  }
  bool ReadWord(uint64_t address, uint64_t* out) const { return Read(address, out, 8); }
  // Reads a NUL-terminated string of at most `capacity` - 1 characters into `out`; false if it
  // is unreadable or longer.
  bool ReadString(uint64_t address, char* out, size_t capacity) const;

  bool Readable(uint64_t address, size_t length) const;
  // The module segment containing [address, address + length) if it is mapped, else nullptr.
  const Segment* MappedSegment(uint64_t address, size_t length = 8) const;
  bool InReadOnlyData(uint64_t address, size_t length = 8) const {
    const Segment* s = MappedSegment(address, length);
    return s != nullptr && s->kind == SegmentKind::kReadOnly;
  }
  bool InCode(uint64_t address) const {
    const Segment* s = MappedSegment(address, 1);
    return s != nullptr && s->kind == SegmentKind::kCode;
  }

  const BlockIndex& blocks() const { return blocks_; }
  const ModuleSegments& modules() const { return modules_; }
  uint32_t block_count() const { return blocks_.size(); }
  const BlockRange& block(uint32_t i) const { return blocks_.block(i); }
  // The block containing `address` (interior included) / starting at it; BlockIndex::kNotFound.
  uint32_t BlockContaining(uint64_t address) const { return blocks_.Find(address); }
  uint32_t BlockStartingAt(uint64_t address) const { return blocks_.FindStart(address); }

 private:
  const BlockIndex& blocks_;
  const ModuleSegments& modules_;
  std::vector<uint8_t, MmapAllocator<uint8_t>> mapped_;  // per segment: readable throughout
};

}  // namespace heapgraph::scanner::types
