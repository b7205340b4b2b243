// graph/: the leak graph: unreachable blocks and the references among them. Strongly connected
// components give cycles; the condensation's source components are the leak roots. Each source
// component yields exactly one direct leak, its representative: the member allocated first
// (smallest sequence number, then lowest address), since the object created first is usually the
// one that created and owns the rest. Every other leaked block is indirect. A direct leak's
// retained size is the size of its subtree in the dominator tree (Lengauer-Tarjan) rooted at a
// virtual vertex linked to every representative, so a block reachable from two leak roots is
// counted for neither. Blocks without any reference (most of a typical leak set) skip Boost:
// each is an acyclic source component of its own; with no reference at all the graph keeps no
// per-vertex array. A block pointing into itself (an empty std::map's or std::list's header inside
// an object, an intrusive list sentinel) is not a cycle: self edges are dropped, so they neither
// make a block cyclic nor change whether it is direct or indirect. May include heap/, roots/ and
// scanner/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "scanner/ScanResult.h"

namespace heapgraph::graph {

// The members of a root are LeakGraph::members(root): no allocation per root (a leak set is
// often millions of single-block roots).
struct LeakRoot {
  uint32_t representative = 0;  // vertex index
  uint32_t first_member = 0;    // into the graph's member array (LeakGraph::members)
  uint32_t member_count = 1;    // the source component's size; 1 if acyclic
  bool cyclic = false;          // more than one member
  uint64_t retained_bytes = 0;  // dominator subtree, representative included
  uint64_t retained_blocks = 0;
};

class LeakGraph {
 public:
  // Reads the scanner's blocks in place (sequence = seq): `blocks` must outlive the graph.
  // `edges` are (from, to) vertex pairs; duplicates and self edges are allowed (self edges are
  // ignored).
  LeakGraph(std::span<const scanner::LeakedBlock> blocks,
            const std::vector<std::pair<uint32_t, uint32_t>>& edges);

  // Largest retained first. Built on the first call (one LeakRoot per isolated block, so a report
  // that only needs retained_bytes() never pays for them); not thread-safe until then.
  const std::vector<LeakRoot>& roots() const;
  // The root's source component, representative first, then in allocation order.
  std::span<const uint32_t> members(const LeakRoot& root) const {
    return {members_.data() + root.first_member, root.member_count};
  }
  bool is_direct(uint32_t v) const { return linked_vertices_ == 0 || direct_[v] != 0; }
  // The retained bytes of v's root when v is direct (its representative), else 0.
  uint64_t retained_bytes(uint32_t v) const {
    if (linked_vertices_ == 0) return Size(v);  // no edges: every block retains only itself
    if (direct_[v] == 0) return 0;
    uint32_t c = component_[v];
    if (c >= linked_components_) return Size(v);  // isolated: retains only itself
    return linked_roots_[root_of_[c]].retained_bytes;
  }
  uint32_t component(uint32_t v) const { return linked_vertices_ == 0 ? v : component_[v]; }
  // Members of every component of two or more blocks (sources or not), each in address order.
  const std::vector<std::vector<uint32_t>>& cycles() const { return cycles_; }
  // The dominator of v (UINT32_MAX for representatives, which hang off the virtual root).
  uint32_t immediate_dominator(uint32_t v) const {
    return linked_vertices_ == 0 ? UINT32_MAX : idom_[v];
  }

 private:
  struct Linked;  // the vertices with edges, renumbered compactly (LeakGraph.cc)
  struct Lists;

  void Build(const std::vector<std::pair<uint32_t, uint32_t>>& edges);
  // Vertex v's block.
  size_t BlockCount() const { return blocks_.size(); }
  uint64_t Size(uint32_t v) const { return blocks_[v].size; }
  uint64_t Address(uint32_t v) const { return blocks_[v].address; }
  uint64_t Sequence(uint32_t v) const { return blocks_[v].seq; }
  Linked LinkVertices(const std::vector<std::pair<uint32_t, uint32_t>>& edges) const;
  bool Earlier(uint32_t a, uint32_t b) const;  // allocated first: sequence, then address
  void FindComponents(Linked& linked);
  std::vector<uint32_t> Globals(const Linked& linked, const Lists& members, size_t c) const;
  void AddLinkedRoot(uint32_t c, Linked& linked, const Lists& members);
  void ComputeDominators(Linked& linked);
  void KeepLinkedRoots(Linked& linked);
  void OrderRoots() const;
  static void RadixSort(std::vector<std::pair<uint64_t, uint32_t>>& items);
  void SubtreeSizes(const Linked& linked, const std::vector<uint32_t>& parent,
                    std::vector<uint64_t>& bytes, std::vector<uint64_t>& count) const;

  std::span<const scanner::LeakedBlock> blocks_;
  // Per vertex; left empty when there are no edges (linked_vertices_ == 0): then every vertex is
  // its own component, direct, without a dominator.
  std::vector<uint32_t> component_;
  std::vector<uint8_t> direct_;
  std::vector<uint32_t> idom_;
  // Linked source components (component_[v] < linked_components_ iff v has an edge): their roots,
  // members and, per linked component, the index of its root (UINT32_MAX if not a source).
  size_t linked_components_ = 0;
  size_t linked_vertices_ = 0;
  std::vector<LeakRoot> linked_roots_;
  std::vector<std::vector<uint32_t>> linked_members_;
  std::vector<uint32_t> root_of_;
  // Built by roots() on first use.
  mutable bool ordered_ = false;
  mutable std::vector<LeakRoot> roots_;
  mutable std::vector<uint32_t> members_;  // every root's members, in roots_ order
  std::vector<std::vector<uint32_t>> cycles_;
};

}  // namespace heapgraph::graph
