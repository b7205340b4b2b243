// check/: the built-in type readers (scanner/types/BuiltInReaders), prepared once and kept from one
// use to the next; prepared again only when the program loaded or unloaded a module since (glibc's
// dlpi_adds / dlpi_subs counters; the libraries heapgraph opens on demand, such as elfutils for
// the first symbolized frame, are left out). Preparing them (module segments, vtables, DWARF
// layouts) was most of a repeated check's preparation. Not thread-safe: its users run one at a time
// (the check lock, the watcher's refresh thread).
#pragma once

#include <cstdint>
#include <memory>

#include "scanner/types/ReaderSet.h"

namespace heapgraph::report {

class ReaderCache {
 public:
  // `field_layouts`: the readers read DWARF layouts for field names (a leak check); false: names
  // only (the watcher's type refresh).
  explicit ReaderCache(bool field_layouts) : field_layouts_(field_layouts) {}

  // The prepared readers for the modules loaded now.
  std::shared_ptr<scanner::types::ReaderSet> Get();

  // Times the readers were prepared (once, then once per module set change).
  uint32_t preparations() const { return preparations_; }

 private:
  bool field_layouts_;
  std::shared_ptr<scanner::types::ReaderSet> readers_;
  uint64_t module_generation_ = UINT64_MAX;
  uint32_t preparations_ = 0;
};

}  // namespace heapgraph::report
