#include "scanner/types/ReaderSet.h"

#include <algorithm>

namespace heapgraph::scanner::types {
namespace {

// Assigns to untyped blocks only; the reader index is filled in by the caller's wrapper.
class SpanSink : public TypeSink {
 public:
  SpanSink(std::span<TypeIdentity> identities, uint16_t reader)
      : identities_(identities), reader_(reader) {}
  void Assign(uint32_t block, const TypeIdentity& identity) override {
    if (block >= identities_.size() || identities_[block].typed() || !identity.typed()) return;
    identities_[block] = identity;
    identities_[block].reader = reader_;
  }

 private:
  std::span<TypeIdentity> identities_;
  uint16_t reader_;
};

}  // namespace

void ReaderSet::Add(std::unique_ptr<ObjectModelReader> reader) {
  readers_.push_back(std::move(reader));
  active_.push_back(0);
}

void ReaderSet::Prepare() {
  ModuleSegments modules;
  modules.Collect();
  Prepare(std::move(modules));
}

void ReaderSet::Prepare(ModuleSegments modules) {
  modules_ = std::move(modules);
  PrepareContext context{modules_};
  for (size_t i = 0; i < readers_.size(); ++i) active_[i] = readers_[i]->Prepare(context) ? 1 : 0;
}

TypeIdentity ReaderSet::Identify(const SnapshotMemory& memory, uint32_t block) const {
  TypeIdentity identity;
  for (size_t i = 0; i < readers_.size(); ++i) {
    if (active_[i] == 0) continue;
    if (readers_[i]->Identify(memory, block, &identity)) {
      identity.reader = static_cast<uint16_t>(i);
      return identity;
    }
    identity = TypeIdentity();
  }
  return identity;
}

void ReaderSet::IdentifyAll(const SnapshotMemory& memory,
                            std::span<TypeIdentity> identities) const {
  IdentifyRange(memory, identities, 0, memory.block_count());
  IdentifyReferenced(memory, identities);
}

void ReaderSet::IdentifyRange(const SnapshotMemory& memory, std::span<TypeIdentity> identities,
                              uint32_t begin, uint32_t end) const {
  end = static_cast<uint32_t>(std::min<uint64_t>({end, memory.block_count(), identities.size()}));
  for (uint32_t b = begin; b < end; ++b) identities[b] = Identify(memory, b);
}

void ReaderSet::IdentifyReferenced(const SnapshotMemory& memory,
                                   std::span<TypeIdentity> identities) const {
  uint32_t n = memory.block_count();
  for (size_t i = 0; i < readers_.size(); ++i) {
    if (active_[i] == 0 || !readers_[i]->wants_referenced()) continue;
    SpanSink sink(identities, static_cast<uint16_t>(i));
    for (uint32_t b = 0; b < n && b < identities.size(); ++b) {
      readers_[i]->IdentifyReferenced(memory, b, identities[b], sink);
    }
  }
}

const TypeDescription& ReaderSet::Describe(const TypeIdentity& identity) {
  Key key{static_cast<uint8_t>(identity.model), identity.reader, identity.flags, identity.key,
          identity.aux};
  auto it = descriptions_.find(key);
  if (it != descriptions_.end()) return it->second;
  TypeDescription description;
  if (identity.typed() && identity.reader < readers_.size()) {
    description = readers_[identity.reader]->Describe(identity, DescribeContext{modules_});
  }
  return descriptions_.emplace(key, std::move(description)).first->second;
}

}  // namespace heapgraph::scanner::types
