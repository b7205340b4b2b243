// report/: the memory-pressure watcher's type refresh, run inside the recorded process from
// libheapgraph_scan.so (heapgraph_internal_refresh_types): copies the live heap blocks out of the
// recorder's tree one shard at a time, reads each block's first word with process_vm_readv (the
// program keeps running: a block freed meanwhile is read harmlessly and may be misnamed — types
// are a best-effort snapshot), names C++ objects with scanner::VtableTypeReader and rewrites the
// recording's `types` file (format::TypesHeader; types.tmp renamed over types).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heap/LiveAllocationTree.h"
#include "heap/RecorderAccess.h"

namespace heapgraph::report {

struct TypedBlock {
  uint64_t address = 0;
  uint32_t seq = 0;
  uint32_t type = 0;  // index into names
};

struct TypeSnapshot {
  std::vector<std::string> names;
  std::vector<TypedBlock> blocks;  // sorted by address
  uint64_t blocks_read = 0;        // heap blocks examined
};

class TypeRefresh {
 public:
  // Reads the types of `heap`'s live blocks now.
  static TypeSnapshot Take(LiveAllocationTree& heap);
  // Writes `snapshot` as the `types` file in `dir_fd`; false with errno.
  static bool Write(const TypeSnapshot& snapshot, int dir_fd, uint64_t sequence);
};

}  // namespace heapgraph::report
