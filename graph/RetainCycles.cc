#include "graph/RetainCycles.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <deque>

#include "graph/CycleKind.h"

namespace heapgraph::graph {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

std::string RetainCycles::FieldText(const StrongEdge& edge) {
  return edge.field.empty() ? "+" + std::to_string(edge.offset) : edge.field;
}

RetainCycles::RetainCycles(const std::vector<RetainCycleVertex>& vertices,
                           const std::vector<StrongEdge>& edges)
    : vertices_(vertices), edges_(edges), out_(vertices.size()), via_(vertices.size(), kNone) {
  Graph g(vertices.size());
  for (uint32_t i = 0; i < edges.size(); ++i) {
    out_[edges[i].from].push_back(i);
    boost::add_edge(edges[i].from, edges[i].to, g);
  }
  component_.assign(vertices.size(), 0);
  size_t count = vertices.empty() ? 0 : boost::strong_components(g, component_.data());
  std::vector<std::vector<uint32_t>> members(count);
  for (uint32_t v = 0; v < vertices.size(); ++v) members[component_[v]].push_back(v);
  for (size_t c = 0; c < count; ++c) {
    // The canonical cycle of the component: shortest, then smallest canonical sequence.
    std::vector<uint32_t> best;
    std::vector<std::string> best_sequence;
    size_t starts = std::min(members[c].size(), kMaxStarts);
    for (size_t s = 0; s < starts; ++s) {
      std::vector<uint32_t> path = ShortestCycleFrom(members[c][s], static_cast<uint32_t>(c));
      if (path.empty() || (!best.empty() && path.size() > best.size())) continue;
      RetainCycle candidate = Canonical(path);
      std::vector<std::string> sequence = Sequence(candidate.edges, 0);
      if (best.empty() || path.size() < best.size() || sequence < best_sequence) {
        best = candidate.edges;
        best_sequence = std::move(sequence);
      }
    }
    if (best.empty()) continue;
    RetainCycle cycle = Canonical(best);
    cycle.component_size = static_cast<uint32_t>(members[c].size());
    cycle.leaked = vertices[cycle.members.front()].leaked;
    cycle.kind = Kind(cycle);
    cycles_.push_back(std::move(cycle));
  }
}

// Edge indices of a shortest closed path from `start` back to it inside `component`; empty if
// start lies on no cycle (a one-object component without a self edge).
std::vector<uint32_t> RetainCycles::ShortestCycleFrom(uint32_t start, uint32_t component) const {
  std::vector<uint32_t> path;
  reached_.clear();
  std::deque<uint32_t> queue = {start};
  while (!queue.empty() && path.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    for (uint32_t e : out_[u]) {
      uint32_t w = edges_[e].to;
      if (component_[w] != component) continue;
      if (w == start) {
        path = {e};
        for (uint32_t x = u; x != start; x = edges_[via_[x]].from) path.push_back(via_[x]);
        std::reverse(path.begin(), path.end());
        break;
      }
      if (via_[w] == kNone) {
        via_[w] = e;
        reached_.push_back(w);
        queue.push_back(w);
      }
    }
  }
  for (uint32_t v : reached_) via_[v] = kNone;
  return path;
}

// (type, field) of each member around the cycle, starting at `rotation`.
std::vector<std::string> RetainCycles::Sequence(const std::vector<uint32_t>& edge_path,
                                                size_t rotation) const {
  std::vector<std::string> sequence;
  for (size_t i = 0; i < edge_path.size(); ++i) {
    const StrongEdge& e = edges_[edge_path[(rotation + i) % edge_path.size()]];
    sequence.push_back(vertices_[e.from].name);
    sequence.push_back(FieldText(e));
  }
  return sequence;
}

RetainCycle RetainCycles::Canonical(std::vector<uint32_t> edge_path) const {
  size_t best = 0;
  std::vector<std::string> best_sequence = Sequence(edge_path, 0);
  for (size_t r = 1; r < edge_path.size(); ++r) {
    std::vector<std::string> sequence = Sequence(edge_path, r);
    if (sequence < best_sequence) {
      best = r;
      best_sequence = std::move(sequence);
    }
  }
  std::rotate(edge_path.begin(), edge_path.begin() + static_cast<ptrdiff_t>(best), edge_path.end());
  RetainCycle cycle;
  for (uint32_t e : edge_path) cycle.members.push_back(edges_[e].from);
  cycle.edges = std::move(edge_path);
  return cycle;
}

std::string RetainCycles::Kind(const RetainCycle& cycle) const {
  std::vector<CycleStep> steps;
  for (size_t i = 0; i < cycle.members.size(); ++i) {
    steps.push_back({vertices_[cycle.members[i]].closure, edges_[cycle.edges[i]].label});
  }
  return CycleKind(steps);
}

}  // namespace heapgraph::graph
