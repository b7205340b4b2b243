// check/: the memory-pressure watcher's type refresh, run inside the recorded process from
// libheapgraph_scan.so (heapgraph_internal_refresh_types): copies the live heap blocks' ranges out
// of the recorder's tree one shard at a time, offers every block to the typed-graph readers
// (scanner/types: BuiltInReaders — C++ vtables, shared_ptr control blocks and the objects they
// manage, std::function functors, clang Blocks, GNU Objective-C isa; docs/typed-graph.md) through
// SnapshotMemory over LiveMemory (process_vm_readv: the program keeps running, so a block freed
// meanwhile reads as unreadable or stale, never faults — types are a best-effort snapshot), and
// rewrites the recording's `types` file (format::TypesHeader; types.tmp renamed over types). The
// readers are prepared once and again only when a module was loaded or unloaded; they describe
// names only (no DWARF fields).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check/ReaderCache.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/store/LiveAllocationTree.h"
#include "report/Symbolizer.h"
#include "scanner/types/ReaderSet.h"

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
  uint64_t copies = 0;             // process_vm_readv copies made (LiveMemory)
};

class TypeRefresh {
 public:
  TypeRefresh();
  // Reads the types of `heap`'s live blocks now.
  TypeSnapshot Take(LiveAllocationTree& heap);
  // Writes `snapshot` as the `types` file in `dir_fd`; false with errno.
  static bool Write(const TypeSnapshot& snapshot, int dir_fd, uint64_t sequence);

  // Times the readers were prepared (for tests: once, then once per module set change).
  uint32_t preparations() const { return readers_.preparations(); }

 private:
  // The description's name, "{}" replaced by the symbolized function at name_symbol.
  std::string Name(const scanner::types::TypeDescription& d,
                   const scanner::types::ReaderSet& readers);

  ReaderCache readers_;
  std::unique_ptr<Symbolizer> symbolizer_;
};

}  // namespace heapgraph::report
