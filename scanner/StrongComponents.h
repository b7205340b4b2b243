// scanner/: strongly connected components of a directed graph in the snapshot child (Tarjan's
// algorithm, iterative, memory from MmapAllocator: no host malloc). Used on the references among
// typed blocks to find which reachable ones may lie on a cycle, so that retention paths are
// searched only when one exists. Boost's version (graph/) allocates with the host's malloc.
// May include heap/ and roots/.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "scanner/MmapAllocator.h"

namespace heapgraph::scanner {

class StrongComponents {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // `edges` are (from, to) pairs over vertices [0, vertex_count).
  StrongComponents(uint32_t vertex_count, std::span<const std::pair<uint32_t, uint32_t>> edges);

  uint32_t component(uint32_t v) const { return component_[v]; }
  uint32_t count() const { return count_; }
  // More than one vertex, or a vertex with an edge to itself.
  bool cyclic(uint32_t component) const { return cyclic_[component] != 0; }

 private:
  template <typename T>
  using Vector = std::vector<T, MmapAllocator<T>>;

  void Visit(uint32_t root);

  Vector<uint32_t> offsets_;  // CSR: successors of v are targets_[offsets_[v] .. offsets_[v+1])
  Vector<uint32_t> targets_;
  Vector<uint32_t> index_;  // DFS number, kNone if unvisited
  Vector<uint32_t> low_;
  Vector<uint32_t> component_;
  Vector<uint8_t> on_stack_;
  Vector<uint8_t> cyclic_;
  Vector<uint32_t> stack_;
  Vector<std::pair<uint32_t, uint32_t>> calls_;  // (vertex, next successor position)
  uint32_t next_index_ = 0;
  uint32_t count_ = 0;
};

}  // namespace heapgraph::scanner
