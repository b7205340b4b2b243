#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner::types {
namespace {

// True when [begin, end) is covered by readable mappings without a gap. Mappings are sorted.
bool MappedReadable(const roots::ProcessMappings& mappings, uint64_t begin, uint64_t end) {
  uint64_t at = begin;
  while (at < end) {
    const roots::ProcessMappings::Mapping* m = mappings.Find(at);
    if (m == nullptr || !m->readable || m->shared) return false;
    at = m->end;
  }
  return true;
}

}  // namespace

SnapshotMemory::SnapshotMemory(const BlockIndex& blocks, const ModuleSegments& modules,
                               const roots::ProcessMappings& mappings)
    : blocks_(blocks), modules_(modules), mapped_(modules.segments().size(), 0) {
  for (size_t i = 0; i < mapped_.size(); ++i) {
    const Segment& s = modules.segments()[i];
    mapped_[i] = MappedReadable(mappings, s.begin, s.end) ? 1 : 0;
  }
}

SnapshotMemory::SnapshotMemory(const BlockIndex& blocks, const ModuleSegments& modules)
    : blocks_(blocks), modules_(modules), mapped_(modules.segments().size(), 1) {}

SnapshotMemory::SnapshotMemory(const BlockIndex& blocks, const ModuleSegments& modules,
                               LiveMemory& live)
    : blocks_(blocks), modules_(modules), mapped_(modules.segments().size(), 1), live_(&live) {}

const Segment* SnapshotMemory::MappedSegment(uint64_t address, size_t length) const {
  const Segment* s = modules_.Find(address, length);
  if (s == nullptr || mapped_[static_cast<size_t>(s - modules_.segments().data())] == 0) {
    return nullptr;
  }
  return s;
}

bool SnapshotMemory::Readable(uint64_t address, size_t length) const {
  if (length == 0 || address + length < address) return false;
  uint32_t b = blocks_.Find(address);
  if (b != BlockIndex::kNotFound) {
    const BlockRange& r = blocks_.block(b);
    return address + length <= r.begin + r.size;
  }
  return MappedSegment(address, length) != nullptr;
}

}  // namespace heapgraph::scanner::types
