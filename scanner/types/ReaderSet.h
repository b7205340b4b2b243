// scanner/types/: the type readers of one leak scan, in identification order, and the phases
// that drive them (ObjectModelReader.h): Prepare before the stop, IdentifyAll in the snapshot
// child, Describe (cached per identity) after the scan. May include heap/, roots/ and scanner/.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "scanner/types/DebugLayouts.h"
#include "scanner/types/ModuleSegments.h"
#include "scanner/types/ObjectModelReader.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner::types {

class ReaderSet {
 public:
  void Add(std::unique_ptr<ObjectModelReader> reader);

  // Checking process, before the stop: collects the module segments and prepares every reader.
  void Prepare();
  // For tests: prepares with segments given by the caller.
  void Prepare(ModuleSegments modules);

  // Snapshot child: identities[b] for every live block b (untyped blocks get model kUntyped).
  // `identities` has memory.block_count() entries, zeroed. No allocation.
  void IdentifyAll(const SnapshotMemory& memory, std::span<TypeIdentity> identities) const;
  // IdentifyAll in two steps: each block on its own (blocks [begin, end) only: independent of
  // every other block, so two processes may identify halves of one shared array), then, once
  // every block has its own identity, the blocks that identified ones reference.
  void IdentifyRange(const SnapshotMemory& memory, std::span<TypeIdentity> identities,
                     uint32_t begin, uint32_t end) const;
  void IdentifyReferenced(const SnapshotMemory& memory, std::span<TypeIdentity> identities) const;
  // The same for one block (pass 2 only), for tests and single lookups.
  TypeIdentity Identify(const SnapshotMemory& memory, uint32_t block) const;

  // Checking process, after the scan. The identity must come from this set's readers.
  const TypeDescription& Describe(const TypeIdentity& identity);

  const ModuleSegments& modules() const { return modules_; }
  size_t size() const { return readers_.size(); }
  bool active(size_t reader) const { return active_[reader] != 0; }
  ObjectModelReader& reader(size_t i) { return *readers_[i]; }
  // DWARF class layouts, shared by the readers that want them (checking process only).
  DebugLayouts* debug_layouts() { return debug_layouts_.get(); }

 private:
  using Key = std::tuple<uint8_t, uint16_t, uint8_t, uint64_t, uint64_t>;

  std::vector<std::unique_ptr<ObjectModelReader>> readers_;
  std::vector<uint8_t> active_;
  ModuleSegments modules_;
  std::map<Key, TypeDescription> descriptions_;
  std::unique_ptr<DebugLayouts> debug_layouts_ = std::make_unique<DebugLayouts>();
};

}  // namespace heapgraph::scanner::types
