#include "graph/LeakGraph.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>
#include <boost/graph/strong_components.hpp>

namespace heapgraph::graph {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

LeakGraph::LeakGraph(std::vector<LeakedBlock> blocks,
                     const std::vector<std::pair<uint32_t, uint32_t>>& edges)
    : blocks_(std::move(blocks)) {
  component_.assign(blocks_.size(), 0);
  direct_.assign(blocks_.size(), 0);
  idom_.assign(blocks_.size(), kNone);
  FindComponents(edges);
  ComputeDominators(edges);
  std::stable_sort(roots_.begin(), roots_.end(), [](const LeakRoot& a, const LeakRoot& b) {
    return a.retained_bytes > b.retained_bytes;
  });
}

void LeakGraph::FindComponents(const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  size_t n = blocks_.size();
  Graph g(n);
  for (auto [from, to] : edges) boost::add_edge(from, to, g);
  size_t count = n == 0 ? 0 : boost::strong_components(g, component_.data());
  std::vector<std::vector<uint32_t>> members(count);
  for (uint32_t v = 0; v < n; ++v) members[component_[v]].push_back(v);
  std::vector<uint8_t> has_incoming(count, 0), self_edge(count, 0);
  for (auto [from, to] : edges) {
    if (component_[from] != component_[to]) has_incoming[component_[to]] = 1;
    if (from == to) self_edge[component_[from]] = 1;
  }
  auto earlier = [this](uint32_t a, uint32_t b) {
    if (blocks_[a].sequence != blocks_[b].sequence)
      return blocks_[a].sequence < blocks_[b].sequence;
    return blocks_[a].address < blocks_[b].address;
  };
  for (size_t c = 0; c < count; ++c) {
    std::vector<uint32_t>& m = members[c];
    bool cyclic = m.size() > 1 || self_edge[c] != 0;
    if (cyclic) {
      std::vector<uint32_t> by_address = m;
      std::sort(by_address.begin(), by_address.end(),
                [this](uint32_t a, uint32_t b) { return blocks_[a].address < blocks_[b].address; });
      cycles_.push_back(std::move(by_address));
    }
    if (has_incoming[c] != 0) continue;
    std::sort(m.begin(), m.end(), earlier);
    LeakRoot root;
    root.representative = m.front();
    root.members = m;
    root.cyclic = cyclic;
    direct_[root.representative] = 1;
    roots_.push_back(std::move(root));
  }
}

void LeakGraph::ComputeDominators(const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  size_t n = blocks_.size();
  if (n == 0) return;
  Graph g(n + 1);  // vertex n: the virtual root
  for (auto [from, to] : edges) {
    if (from != to) boost::add_edge(from, to, g);
  }
  for (const LeakRoot& r : roots_) boost::add_edge(n, r.representative, g);
  std::vector<Vertex> dominator(n + 1, boost::graph_traits<Graph>::null_vertex());
  auto index = boost::get(boost::vertex_index, g);
  boost::lengauer_tarjan_dominator_tree(
      g, Vertex(n), boost::make_iterator_property_map(dominator.begin(), index));
  // Subtree sizes: children before parents, via a post-order over the dominator tree.
  std::vector<std::vector<uint32_t>> children(n + 1);
  for (uint32_t v = 0; v < n; ++v) {
    Vertex d = dominator[v];
    if (d == boost::graph_traits<Graph>::null_vertex()) continue;
    children[d].push_back(v);
    idom_[v] = d == n ? kNone : static_cast<uint32_t>(d);
  }
  std::vector<uint64_t> bytes(n + 1, 0), count(n + 1, 0);
  std::vector<std::pair<uint32_t, bool>> stack = {{static_cast<uint32_t>(n), false}};
  while (!stack.empty()) {
    auto [v, expanded] = stack.back();
    stack.pop_back();
    if (!expanded) {
      stack.push_back({v, true});
      for (uint32_t c : children[v]) stack.push_back({c, false});
      continue;
    }
    if (v < n) {
      bytes[v] += blocks_[v].size;
      count[v] += 1;
      Vertex d = dominator[v];
      bytes[d] += bytes[v];
      count[d] += count[v];
    }
  }
  for (LeakRoot& r : roots_) {
    r.retained_bytes = bytes[r.representative];
    r.retained_blocks = count[r.representative];
  }
}

}  // namespace heapgraph::graph
