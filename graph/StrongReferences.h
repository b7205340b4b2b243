// graph/: which references among typed objects own what they point to: the edges of the strong-
// reference graph, from the scan's typed references (scanner/TypedScan) and each object's type
// description (scanner/types). Rules, in order, for a word of object A at offset o pointing into
// object B:
//  1. A's description has a field at o: strong -> owning (with the field's label and name);
//     weak -> not owning. A conservative field only names the word; rules 3-5 decide.
//  2. A's description is exhaustive and has no field at o: not owning.
//  3. B is a closure (a std::function heap functor or a heap clang Block) and the word points at
//     its start: owning (only the std::function holding a functor stores that pointer, copies
//     clone the functor; a Block's holders got their pointers from Block_copy), unless B has more
//     holders among the typed objects than owners: a functor has one, a Block its reference count.
//     Then some holder is a raw pointer that does not own, and since which one cannot be told,
//     none is taken as owning (as in rule 4, a missed cycle rather than a false one). "Holders"
//     are the typed references to B's start that rules 1-2 did not exclude (weak or outside an
//     exhaustive layout). A non-owning raw pointer whose Block is owned only from outside the
//     typed objects (a global, a stack, an untyped block) is not caught.
//  4. B is a shared_ptr control block, the word points at its start, and A's previous word points
//     at B's managed object (a shared_ptr or weak_ptr: {element, control block}): owning
//     (kSharedOwner) when B's counts show no weak_ptr at all (then every such pair is a
//     shared_ptr); not owning when B's object has expired; otherwise unknown, and left out — a
//     weak_ptr cannot be told from a shared_ptr without DWARF, and a false cycle costs more than
//     a missed one. The pair's element word is never owning (the control block owns).
//  5. Anything else stays conservative: in the leak graph, not in the strong-reference graph.
// May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scanner/TypedScanResult.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::graph {

struct StrongEdge {
  uint32_t from = 0;  // typed object index
  uint32_t to = 0;
  uint32_t offset = 0;  // of the owning word in `from`
  scanner::types::EdgeLabel label = scanner::types::EdgeLabel::kNone;
  std::string field;  // the field's name; empty when unknown (print the offset)
};

class StrongReferences {
 public:
  // descriptions[i] describes typed.objects[i] (never null).
  StrongReferences(const scanner::TypedScanResult& typed,
                   std::span<const scanner::types::TypeDescription* const> descriptions);

  const std::vector<StrongEdge>& edges() const { return edges_; }

 private:
  using Description = scanner::types::TypeDescription;
  using Edge = scanner::TypedEdge;

  // The typed reference of `from` at `offset`, or nullptr. Edges of one object are contiguous
  // and in offset order.
  const Edge* EdgeAt(uint32_t from, uint32_t offset) const;
  bool IsSmartPointerPair(const Edge& e) const;
  // Rules 1-2 for `e`: its field (or nullptr), and whether they exclude it (weak or unlisted).
  const scanner::types::FieldDescription* FieldOf(const Edge& e) const;
  bool Excluded(const Edge& e, const scanner::types::FieldDescription* field) const;
  bool IsClosureStart(const Edge& e) const;
  // Rule 3: whether the closure `to` has no more typed holders than owners.
  bool ClosureHoldersWithinOwners(uint32_t to) const;
  bool ManagedBy(const Edge& element, uint32_t control) const;
  void Classify(const Edge& e);

  const scanner::TypedScanResult& typed_;
  std::span<const Description* const> descriptions_;
  std::vector<uint32_t> first_edge_;       // per object: index of its first edge (CSR offsets)
  std::vector<uint32_t> closure_holders_;  // per object: rule 3's holders (closures only)
  std::vector<StrongEdge> edges_;
};

}  // namespace heapgraph::graph
