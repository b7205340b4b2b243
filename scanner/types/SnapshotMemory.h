// scanner/types/: validated reads of the snapshot child's memory for the type readers. A read
// succeeds only when the whole range lies inside one live heap block (the snapshot's copy-on-write
// image of it) or inside one module segment that the snapshot's /proc/self/maps shows readable
// throughout. Nothing else is ever dereferenced, so a reader following a garbage pointer gets
// false, never a fault. No allocation after construction (runs while the program's threads may
// hold malloc locks). In a live process (LiveMemory: the memory-pressure watcher) the same checks
// apply and the bytes are copied with process_vm_readv instead of dereferenced, so the readers run
// unchanged while the program's threads free and unmap. May include heap/, roots/ and scanner/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "roots/ProcessMappings.h"
#include "scanner/BlockIndex.h"
#include "scanner/MmapAllocator.h"
#include "scanner/types/LiveMemory.h"
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
  // A live process: every segment is taken as mapped and every byte is copied through `live`
  // (which fails on what is not mapped now). `blocks` is a copy of the live blocks' ranges.
  SnapshotMemory(const BlockIndex& blocks, const ModuleSegments& modules, LiveMemory& live);

  // Copies [address, address + length) into `out`; false if the range is not entirely inside one
  // live block or one mapped module segment.
  bool Read(uint64_t address, void* out, size_t length) const {
    if (!Readable(address, length)) return false;
    if (live_ != nullptr) return live_->Read(address, out, length);
    std::memcpy(out, reinterpret_cast<const void*>(address), length);
    return true;
  }
  // Words [first, first + count) of block `block`, for readers that scan a whole block: in a
  // snapshot, a pointer into the block itself; live, a copy in `scratch` (count words). Null if
  // the words are not all inside the block or cannot be read.
  const uint64_t* BlockWords(uint32_t block, size_t first, size_t count, uint64_t* scratch) const {
    const BlockRange& b = blocks_.block(block);
    if (count == 0 || (first + count) * 8 > b.size) return nullptr;
    uint64_t at = b.begin + first * 8;
    if (live_ == nullptr) return reinterpret_cast<const uint64_t*>(at);
    return live_->Read(at, scratch, count * 8) ? scratch : nullptr;
  }
  bool ReadWord(uint64_t address, uint64_t* out) const { return Read(address, out, 8); }

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
  // The block starting at `address`; BlockIndex::kNotFound if none.
  uint32_t BlockStartingAt(uint64_t address) const { return blocks_.FindStart(address); }

 private:
  const BlockIndex& blocks_;
  const ModuleSegments& modules_;
  std::vector<uint8_t, MmapAllocator<uint8_t>> mapped_;  // per segment: readable throughout
  LiveMemory* live_ = nullptr;                           // set: a live process
};

}  // namespace heapgraph::scanner::types
