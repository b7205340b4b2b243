#include "heap/plugin/OwnLibraryData.h"

#include "heap/platform/LoadedObject.h"
#include "heap/plugin/ScanPlugin.h"

namespace heapgraph {
namespace {

HeapgraphMemoryRange g_ranges[OwnLibraryData::kMaxRanges];

// Appends the writable segments of the library holding `address` to g_ranges from *count on.
void AddLibraryOf(uintptr_t address, int* count) {
  LoadedObject object;
  if (address == 0 || !LoadedObject::Find(address, &object)) return;
  object.ForEachWritableSegment([count](uintptr_t begin, uintptr_t end) {
    if (*count < OwnLibraryData::kMaxRanges) g_ranges[(*count)++] = {begin, end};
  });
}

}  // namespace

const HeapgraphMemoryRange* OwnLibraryData::Ranges(int* count) {
  *count = 0;
  AddLibraryOf(reinterpret_cast<uintptr_t>(&OwnLibraryData::Ranges), count);
  AddLibraryOf(ScanPlugin::LoadedAddress(), count);
  return g_ranges;
}

}  // namespace heapgraph
