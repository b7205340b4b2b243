// graph/: retain cycles: the strongly connected components (Boost.Graph) of the strong-reference
// graph among typed objects (graph/StrongReferences), leaked and reachable alike, with no depth
// limit. Each component with more than one object, or an object owning itself through an owning
// reference (a typed self-capture, such as a make_shared object holding a shared_ptr to itself),
// yields one cycle: a shortest closed path of owning edges through it (breadth first from each
// member, at most kMaxStarts members tried), printed from its canonical rotation — the member
// whose sequence of (type name, field) pairs around the cycle is lexicographically smallest comes
// first — so that the same cycle gives the same record in every run. A word pointing into its own
// object without owning it (an empty std::map's header, a list sentinel) is no edge of this graph,
// so never a cycle. Its kind follows its shape (graph/CycleKind): the path's owning edges' labels
// and its closures. May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/StrongReferences.h"

namespace heapgraph::graph {

struct RetainCycleVertex {
  std::string name;  // the type name as the report prints it
  scanner::types::ClosureKind closure = scanner::types::ClosureKind::kNone;
  bool leaked = false;
};

struct RetainCycle {
  std::string kind;
  bool leaked = false;            // every member is leaked (a component is all or nothing)
  std::vector<uint32_t> members;  // the path, canonical rotation; members[i] owns members[i+1]
  std::vector<uint32_t> edges;    // edges[i]: index of the strong edge members[i] -> next
  uint32_t component_size = 0;    // objects in the whole component (>= members.size())
};

class RetainCycles {
 public:
  static constexpr size_t kMaxStarts = 64;

  RetainCycles(const std::vector<RetainCycleVertex>& vertices,
               const std::vector<StrongEdge>& edges);

  const std::vector<RetainCycle>& cycles() const { return cycles_; }
  // The field text of an edge: its name, else "+<offset>".
  static std::string FieldText(const StrongEdge& edge);

 private:
  std::vector<uint32_t> ShortestCycleFrom(uint32_t start, uint32_t component) const;
  std::vector<std::string> Sequence(const std::vector<uint32_t>& edge_path, size_t rotation) const;
  RetainCycle Canonical(std::vector<uint32_t> edge_path) const;
  std::string Kind(const RetainCycle& cycle) const;

  const std::vector<RetainCycleVertex>& vertices_;
  const std::vector<StrongEdge>& edges_;
  std::vector<std::vector<uint32_t>> out_;  // per vertex: indices of its strong edges
  std::vector<uint32_t> component_;
  // ShortestCycleFrom's per-vertex "edge that reached it", kNone between calls (each call resets
  // what it set): one allocation for all searches, so each costs what its component holds.
  mutable std::vector<uint32_t> via_;
  mutable std::vector<uint32_t> reached_;
  std::vector<RetainCycle> cycles_;
};

}  // namespace heapgraph::graph
