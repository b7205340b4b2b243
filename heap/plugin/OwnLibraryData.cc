#include "heap/plugin/OwnLibraryData.h"

#include "heap/platform/LoadedObject.h"

namespace heapgraph {
namespace {

HeapgraphMemoryRange g_ranges[OwnLibraryData::kMaxRanges];

}  // namespace

const HeapgraphMemoryRange* OwnLibraryData::Ranges(int* count) {
  *count = 0;
  LoadedObject self;
  if (!LoadedObject::Find(reinterpret_cast<uintptr_t>(&OwnLibraryData::Ranges), &self)) {
    return g_ranges;
  }
  self.ForEachWritableSegment([count](uintptr_t begin, uintptr_t end) {
    if (*count < OwnLibraryData::kMaxRanges) g_ranges[(*count)++] = {begin, end};
  });
  return g_ranges;
}

}  // namespace heapgraph
