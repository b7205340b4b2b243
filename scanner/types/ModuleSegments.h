// scanner/types/: the loaded modules' PT_LOAD segments, collected before the world stops
// (dl_iterate_phdr), as read-only data, code or writable data. A vtable, typeinfo, Block descriptor
// or class structure lies in one of them; a word pointing elsewhere is none of those. The part of
// a writable segment covered by PT_GNU_RELRO (.data.rel.ro: vtables and typeinfo of PIE code and
// shared libraries) is read-only data. May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scanner/MmapAllocator.h"

namespace heapgraph::scanner::types {

enum class SegmentKind : uint8_t { kReadOnly, kCode, kWritable };

struct Segment {
  uint64_t begin = 0;
  uint64_t end = 0;
  SegmentKind kind = SegmentKind::kReadOnly;
  uint32_t module = 0;  // index into ModuleSegments::modules()
};

struct Module {
  std::string path;   // as the loader names it; the main program's is /proc/self/exe's target
  uint64_t bias = 0;  // load bias (runtime address - ELF vaddr)
};

class ModuleSegments {
 public:
  // Collects every loaded module's segments, sorted by address. Allocates (checking process).
  void Collect();
  // For tests: one segment given directly.
  void Add(uint64_t begin, uint64_t end, SegmentKind kind, std::string path = "");

  const std::vector<Segment, MmapAllocator<Segment>>& segments() const { return segments_; }
  const std::vector<Module>& modules() const { return modules_; }
  // The segment containing [address, address + length), or nullptr. Child-safe.
  const Segment* Find(uint64_t address, uint64_t length = 1) const;

 private:
  void Sort();

  // MmapAllocator: the snapshot child keeps a per-segment bit next to it and never reallocates.
  std::vector<Segment, MmapAllocator<Segment>> segments_;
  std::vector<Module> modules_;
};

}  // namespace heapgraph::scanner::types
