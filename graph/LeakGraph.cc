#include "graph/LeakGraph.h"

#include <algorithm>
#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>
#include <boost/graph/strong_components.hpp>

namespace heapgraph::graph {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edges = std::vector<std::pair<uint32_t, uint32_t>>;
constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

// Compressed lists: the items of list i are items[offsets[i] .. offsets[i + 1]).
struct LeakGraph::Lists {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> items;

  // Item j (0 <= j < key.size()) goes into list key[j]; each list keeps ascending j.
  Lists(const std::vector<uint32_t>& key, size_t lists) : offsets(lists + 1, 0), items(key.size()) {
    for (uint32_t k : key) ++offsets[k + 1];
    for (size_t i = 0; i < lists; ++i) offsets[i + 1] += offsets[i];
    std::vector<uint32_t> next(offsets.begin(), offsets.end() - 1);
    for (uint32_t j = 0; j < key.size(); ++j) items[next[key[j]]++] = j;
  }
  const uint32_t* begin(size_t i) const { return items.data() + offsets[i]; }
  const uint32_t* end(size_t i) const { return items.data() + offsets[i + 1]; }
  size_t size(size_t i) const { return offsets[i + 1] - offsets[i]; }
};

// The vertices with at least one edge to another vertex and those edges renumbered over them
// (self edges dropped).
// Invariant: local order is global order, so Boost visits the linked vertices in the same order
// as it would over all vertices, and isolated vertices only add trivial DFS trees.
struct LeakGraph::Linked {
  std::vector<uint32_t> global;     // local index -> vertex
  std::vector<uint32_t> local;      // vertex -> local index, kNone when isolated
  Edges edges;                      // (from, to) in local indices, in input order
  std::vector<uint32_t> component;  // local index -> Boost component id
  size_t components = 0;
  std::vector<uint8_t> source;           // per component: nothing outside points into it
  std::vector<uint32_t> representative;  // per source component: local index of its direct leak
  std::vector<uint32_t> root_of;         // per component: index into `roots`, kNone if no source
  std::vector<LeakRoot> roots;           // the linked source components, in component order
  std::vector<std::vector<uint32_t>> members;  // per linked root: representative first
};

LeakGraph::LeakGraph(std::span<const scanner::LeakedBlock> blocks, const Edges& edges)
    : blocks_(blocks) {
  Build(edges);
}

void LeakGraph::Build(const Edges& edges) {
  if (edges.empty()) return;  // every vertex isolated: no per-vertex arrays (see component())
  component_.assign(BlockCount(), 0);
  direct_.assign(BlockCount(), 0);
  idom_.assign(BlockCount(), kNone);
  Linked linked = LinkVertices(edges);
  FindComponents(linked);
  ComputeDominators(linked);
  KeepLinkedRoots(linked);
}

void LeakGraph::KeepLinkedRoots(Linked& linked) {
  linked_components_ = linked.components;
  linked_vertices_ = linked.global.size();
  linked_roots_ = std::move(linked.roots);
  linked_members_ = std::move(linked.members);
  root_of_ = std::move(linked.root_of);
}

const std::vector<LeakRoot>& LeakGraph::roots() const {
  if (!ordered_) OrderRoots();
  ordered_ = true;
  return roots_;
}

// roots_: every isolated vertex and every linked root, stably sorted by retained bytes (largest
// first) from the order of their smallest vertices, which is the order Boost numbers source
// components in over all vertices (each is a DFS tree of its own, started at its smallest
// vertex). Sorting is an LSD radix sort of (~retained, smallest vertex) pairs that skips the
// bytes every key shares; each root is then built or moved once, in its final place.
void LeakGraph::OrderRoots() const {
  std::vector<std::pair<uint64_t, uint32_t>> items;
  items.reserve(linked_roots_.size() + BlockCount() - linked_vertices_);
  std::vector<uint8_t> seen(linked_components_, 0);  // the component's smallest vertex was passed
  for (uint32_t v = 0; v < BlockCount(); ++v) {
    uint32_t c = component(v);
    if (c >= linked_components_) {
      items.emplace_back(~Size(v), v);
      continue;
    }
    if (root_of_[c] != kNone && seen[c] == 0) {
      items.emplace_back(~linked_roots_[root_of_[c]].retained_bytes, v);
    }
    seen[c] = 1;
  }
  RadixSort(items);
  roots_.reserve(items.size());
  members_.reserve(items.size() - linked_roots_.size() + linked_vertices_);
  for (auto [key, v] : items) {
    auto first = static_cast<uint32_t>(members_.size());
    uint32_t c = component(v);
    if (c >= linked_components_) {
      // No edges: the root dominates only itself.
      roots_.push_back({v, first, 1, false, Size(v), 1});
      members_.push_back(v);
    } else {
      uint32_t r = root_of_[c];
      roots_.push_back(linked_roots_[r]);
      roots_.back().first_member = first;
      members_.insert(members_.end(), linked_members_[r].begin(), linked_members_[r].end());
    }
  }
}

// Stable sort by key, ascending; one counting pass for all eight key bytes.
void LeakGraph::RadixSort(std::vector<std::pair<uint64_t, uint32_t>>& items) {
  std::vector<std::array<size_t, 257>> start(8);
  for (const auto& item : items) {
    for (int byte = 0; byte < 8; ++byte) ++start[byte][((item.first >> (8 * byte)) & 0xff) + 1];
  }
  std::vector<std::pair<uint64_t, uint32_t>> scratch(items.size());
  for (int byte = 0; byte < 8; ++byte) {
    std::array<size_t, 257>& at = start[byte];
    if (std::find(at.begin(), at.end(), items.size()) != at.end()) continue;  // all in one bucket
    for (size_t b = 0; b < 256; ++b) at[b + 1] += at[b];
    for (const auto& item : items) scratch[at[(item.first >> (8 * byte)) & 0xff]++] = item;
    items.swap(scratch);
  }
}

LeakGraph::Linked LeakGraph::LinkVertices(const Edges& edges) const {
  Linked linked;
  linked.local.assign(BlockCount(), kNone);
  for (auto [from, to] : edges) {
    if (from != to) linked.local[from] = linked.local[to] = 0;
  }
  for (uint32_t v = 0; v < BlockCount(); ++v) {
    if (linked.local[v] == kNone) continue;
    linked.local[v] = static_cast<uint32_t>(linked.global.size());
    linked.global.push_back(v);
  }
  linked.edges.reserve(edges.size());
  for (auto [from, to] : edges) {
    if (from != to) linked.edges.emplace_back(linked.local[from], linked.local[to]);
  }
  return linked;
}

bool LeakGraph::Earlier(uint32_t a, uint32_t b) const {
  if (Sequence(a) != Sequence(b)) return Sequence(a) < Sequence(b);
  return Address(a) < Address(b);
}

// Strongly connected components of the linked vertices (Boost), then one root per linked source
// component (retained sizes still 0); isolated vertices are acyclic source components of their
// own and direct.
void LeakGraph::FindComponents(Linked& linked) {
  size_t m = linked.global.size();
  Graph g(m);
  for (auto [from, to] : linked.edges) boost::add_edge(from, to, g);
  linked.component.assign(m, 0);
  linked.components = m == 0 ? 0 : boost::strong_components(g, linked.component.data());
  size_t count = linked.components;
  Lists members(linked.component, count);  // local indices, ascending
  linked.source.assign(count, 1);
  for (auto [from, to] : linked.edges) {
    if (linked.component[from] != linked.component[to]) linked.source[linked.component[to]] = 0;
  }
  for (size_t c = 0; c < count; ++c) {
    if (members.size(c) > 1) cycles_.push_back(Globals(linked, members, c));
  }
  // Isolated vertices are numbered after the linked components.
  uint32_t next_isolated = static_cast<uint32_t>(count);
  for (uint32_t v = 0; v < BlockCount(); ++v) {
    uint32_t l = linked.local[v];
    component_[v] = l == kNone ? next_isolated++ : linked.component[l];
    if (l == kNone) direct_[v] = 1;
  }
  linked.representative.assign(count, kNone);
  linked.root_of.assign(count, kNone);
  for (uint32_t c = 0; c < count; ++c) {
    if (linked.source[c] != 0) AddLinkedRoot(c, linked, members);
  }
}

// Members of linked component c as vertices, in address order.
std::vector<uint32_t> LeakGraph::Globals(const Linked& linked, const Lists& members,
                                         size_t c) const {
  std::vector<uint32_t> vertices;
  vertices.reserve(members.size(c));
  for (const uint32_t* l = members.begin(c); l != members.end(c); ++l) {
    vertices.push_back(linked.global[*l]);
  }
  std::sort(vertices.begin(), vertices.end(),
            [this](uint32_t a, uint32_t b) { return Address(a) < Address(b); });
  return vertices;
}

// The root of linked source component c: members in allocation order, the first one direct.
void LeakGraph::AddLinkedRoot(uint32_t c, Linked& linked, const Lists& members) {
  std::vector<uint32_t> vertices;
  vertices.reserve(members.size(c));
  for (const uint32_t* x = members.begin(c); x != members.end(c); ++x) {
    vertices.push_back(linked.global[*x]);
  }
  std::sort(vertices.begin(), vertices.end(),
            [this](uint32_t a, uint32_t b) { return Earlier(a, b); });
  LeakRoot root;
  root.representative = vertices.front();
  root.member_count = static_cast<uint32_t>(vertices.size());
  root.cyclic = members.size(c) > 1;
  direct_[root.representative] = 1;
  linked.representative[c] = linked.local[root.representative];
  linked.root_of[c] = static_cast<uint32_t>(linked.roots.size());
  linked.roots.push_back(root);
  linked.members.push_back(std::move(vertices));
}

// Dominator tree (Lengauer-Tarjan) of the linked vertices under a virtual root linked to every
// linked representative; isolated vertices hang off the virtual root and keep idom kNone. Every
// linked vertex is reachable: each lies in or below a source component.
void LeakGraph::ComputeDominators(Linked& linked) {
  size_t m = linked.global.size();
  if (m == 0) return;
  Graph g(m + 1);  // vertex m: the virtual root
  for (auto [from, to] : linked.edges) boost::add_edge(from, to, g);
  for (uint32_t r : linked.representative) {
    if (r != kNone) boost::add_edge(m, r, g);
  }
  std::vector<Vertex> dominator(m + 1, boost::graph_traits<Graph>::null_vertex());
  auto index = boost::get(boost::vertex_index, g);
  boost::lengauer_tarjan_dominator_tree(
      g, Vertex(m), boost::make_iterator_property_map(dominator.begin(), index));
  std::vector<uint32_t> parent(m + 1, static_cast<uint32_t>(m));  // the root is its own parent
  for (uint32_t l = 0; l < m; ++l) {
    if (dominator[l] != boost::graph_traits<Graph>::null_vertex()) {
      parent[l] = static_cast<uint32_t>(dominator[l]);
    }
    idom_[linked.global[l]] = parent[l] == m ? kNone : linked.global[parent[l]];
  }
  std::vector<uint64_t> bytes(m + 1, 0), count(m + 1, 0);
  SubtreeSizes(linked, parent, bytes, count);
  for (LeakRoot& r : linked.roots) {
    uint32_t l = linked.local[r.representative];
    r.retained_bytes = bytes[l];
    r.retained_blocks = count[l];
  }
}

// bytes[l] / count[l]: the dominator subtree of local vertex l. parent[root] == root (the last
// index). Children are summed before parents by walking a breadth-first order backwards.
void LeakGraph::SubtreeSizes(const Linked& linked, const std::vector<uint32_t>& parent,
                             std::vector<uint64_t>& bytes, std::vector<uint64_t>& count) const {
  uint32_t root = static_cast<uint32_t>(parent.size() - 1);
  Lists children(parent, parent.size());  // the root lists itself among its children
  std::vector<uint32_t> order = {root};
  order.reserve(parent.size());
  for (size_t i = 0; i < order.size(); ++i) {
    for (const uint32_t* c = children.begin(order[i]); c != children.end(order[i]); ++c) {
      if (*c != root) order.push_back(*c);
    }
  }
  for (size_t i = order.size(); i-- > 1;) {
    uint32_t l = order[i];
    bytes[l] += Size(linked.global[l]);
    count[l] += 1;
    bytes[parent[l]] += bytes[l];
    count[parent[l]] += count[l];
  }
}

}  // namespace heapgraph::graph
