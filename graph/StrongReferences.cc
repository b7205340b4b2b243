#include "graph/StrongReferences.h"

#include <algorithm>

#include "scanner/types/SharedPtrReader.h"

namespace heapgraph::graph {
namespace {

using scanner::types::EdgeLabel;
using scanner::types::FieldDescription;
using scanner::types::FieldStrength;
using scanner::types::ObjectModel;
using scanner::types::SharedPtrReader;

const FieldDescription* FieldAt(const scanner::types::TypeDescription& d, uint32_t offset) {
  auto it = std::lower_bound(d.fields.begin(), d.fields.end(), offset,
                             [](const FieldDescription& f, uint32_t o) { return f.offset < o; });
  return it != d.fields.end() && it->offset == offset ? &*it : nullptr;
}

}  // namespace

StrongReferences::StrongReferences(const scanner::TypedScanResult& typed,
                                   std::span<const Description* const> descriptions)
    : typed_(typed), descriptions_(descriptions), first_edge_(typed.objects.size() + 1, 0) {
  for (const Edge& e : typed.edges) ++first_edge_[e.from + 1];
  for (size_t i = 0; i < typed.objects.size(); ++i) first_edge_[i + 1] += first_edge_[i];
  closure_holders_.assign(typed.objects.size(), 0);
  for (const Edge& e : typed.edges) {
    if (IsClosureStart(e) && !Excluded(e, FieldOf(e))) ++closure_holders_[e.to];
  }
  for (const Edge& e : typed.edges) Classify(e);
}

const scanner::TypedEdge* StrongReferences::EdgeAt(uint32_t from, uint32_t offset) const {
  const Edge* begin = typed_.edges.data() + first_edge_[from];
  const Edge* end = typed_.edges.data() + first_edge_[from + 1];
  const Edge* it =
      std::lower_bound(begin, end, offset, [](const Edge& e, uint32_t o) { return e.offset < o; });
  return it != end && it->offset == offset ? it : nullptr;
}

// Whether `element` points at the object that control block `control` manages.
bool StrongReferences::ManagedBy(const Edge& element, uint32_t control) const {
  const scanner::types::TypeIdentity& id = typed_.objects[control].identity;
  if (SharedPtrReader::VariantOf(id) == SharedPtrReader::kInplace) {
    return element.to == control && element.target_offset == SharedPtrReader::OffsetOf(id);
  }
  const Edge* managed = EdgeAt(control, SharedPtrReader::OffsetOf(id));
  return managed != nullptr && managed->to == element.to && element.target_offset == 0;
}

bool StrongReferences::IsSmartPointerPair(const Edge& e) const {
  if (e.offset < 8 || e.target_offset != 0) return false;
  const Edge* element = EdgeAt(e.from, e.offset - 8);
  return element != nullptr && ManagedBy(*element, e.to);
}

const FieldDescription* StrongReferences::FieldOf(const Edge& e) const {
  return FieldAt(*descriptions_[e.from], e.offset);
}

bool StrongReferences::Excluded(const Edge& e, const FieldDescription* field) const {
  if (field != nullptr) return field->strength == FieldStrength::kWeak;
  return descriptions_[e.from]->exhaustive;
}

// A heap Block is reference counted, a functor owned by the one std::function that stores it:
// every owner of a pointer to its start got it from Block_copy (or the std::function).
bool StrongReferences::IsClosureStart(const Edge& e) const {
  ObjectModel model = typed_.objects[e.to].identity.model;
  return e.target_offset == 0 &&
         (model == ObjectModel::kStdFunctor || model == ObjectModel::kClangBlock);
}

bool StrongReferences::ClosureHoldersWithinOwners(uint32_t to) const {
  const scanner::types::TypeIdentity& target = typed_.objects[to].identity;
  uint32_t owners = target.model == ObjectModel::kClangBlock ? target.count : 1;
  return closure_holders_[to] <= owners;
}

void StrongReferences::Classify(const Edge& e) {
  const FieldDescription* field = FieldOf(e);
  std::string name = field != nullptr ? field->name : "";
  if (field != nullptr && field->strength == FieldStrength::kStrong) {
    edges_.push_back({e.from, e.to, e.offset, field->label, name});
    return;
  }
  if (Excluded(e, field)) return;
  const scanner::types::TypeIdentity& target = typed_.objects[e.to].identity;
  if (IsClosureStart(e)) {
    if (ClosureHoldersWithinOwners(e.to)) {
      edges_.push_back({e.from, e.to, e.offset, EdgeLabel::kNone, name});
    }
    return;
  }
  if (target.model == ObjectModel::kSharedPtrControl && IsSmartPointerPair(e)) {
    bool only_shared =
        (target.flags & (SharedPtrReader::kHasWeak | SharedPtrReader::kExpired)) == 0;
    if (only_shared) edges_.push_back({e.from, e.to, e.offset, EdgeLabel::kSharedOwner, name});
  }
}

}  // namespace heapgraph::graph
