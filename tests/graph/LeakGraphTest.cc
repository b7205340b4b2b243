#include <gtest/gtest.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>
#include <boost/graph/strong_components.hpp>
#include <random>

#include "graph/LeakGraph.h"

namespace heapgraph::graph {
namespace {

using scanner::LeakedBlock;

// Blocks 0..n-1 at address 0x1000 * (i + 1), size 16 * (i + 1), sequence = `seq[i]` or i.
std::vector<LeakedBlock> Blocks(size_t n, std::vector<uint32_t> seq = {}) {
  std::vector<LeakedBlock> blocks(n);
  for (size_t i = 0; i < n; ++i) {
    blocks[i] = {0x1000 * (i + 1), 16 * (i + 1), 7,
                 seq.empty() ? static_cast<uint32_t>(i) : seq[i]};
  }
  return blocks;
}

TEST(LeakGraphTest, LoneBlocksAreDirect) {
  std::vector<LeakedBlock> blocks = Blocks(3);
  LeakGraph g(blocks, {});
  ASSERT_EQ(g.roots().size(), 3u);
  for (uint32_t v = 0; v < 3; ++v) EXPECT_TRUE(g.is_direct(v));
  EXPECT_EQ(g.roots()[0].retained_bytes, 48u);  // largest first
  EXPECT_TRUE(g.cycles().empty());
}

TEST(LeakGraphTest, ChainHasOneDirectLeakRetainingAll) {
  std::vector<LeakedBlock> blocks = Blocks(4);
  LeakGraph g(blocks, {{0, 1}, {1, 2}, {2, 3}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.roots()[0].representative, 0u);
  EXPECT_EQ(g.roots()[0].retained_bytes, 16u + 32 + 48 + 64);
  EXPECT_EQ(g.roots()[0].retained_blocks, 4u);
  EXPECT_FALSE(g.is_direct(3));
  EXPECT_EQ(g.immediate_dominator(3), 2u);
}

// A block pointing into itself (an empty std::map's header inside an object) is no cycle, and
// changes nothing: alone it is direct, under another leak indirect, and retains what it did.
TEST(LeakGraphTest, SelfPointerIsNoCycle) {
  std::vector<LeakedBlock> blocks = Blocks(1);
  LeakGraph g(blocks, {{0, 0}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_FALSE(g.roots()[0].cyclic);
  EXPECT_TRUE(g.is_direct(0));
  EXPECT_EQ(g.retained_bytes(0), 16u);
  EXPECT_TRUE(g.cycles().empty());

  // 0 -> 1 -> 2, each pointing to itself too: one direct leak retaining all, no cycle.
  std::vector<LeakedBlock> chain = Blocks(3);
  LeakGraph h(chain, {{0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 2}});
  ASSERT_EQ(h.roots().size(), 1u);
  EXPECT_FALSE(h.roots()[0].cyclic);
  EXPECT_EQ(h.roots()[0].member_count, 1u);
  EXPECT_TRUE(h.is_direct(0));
  EXPECT_FALSE(h.is_direct(1));
  EXPECT_FALSE(h.is_direct(2));
  EXPECT_EQ(h.roots()[0].retained_bytes, 16u + 32 + 48);
  EXPECT_TRUE(h.cycles().empty());
}

TEST(LeakGraphTest, CycleYieldsOneDirectRecordChosenByAllocationOrder) {
  // 3-cycle 0 -> 1 -> 2 -> 0 where block 2 was allocated first, with a tail 2 -> 3.
  std::vector<LeakedBlock> blocks = Blocks(4, {5, 7, 1, 9});
  LeakGraph g(blocks, {{0, 1}, {1, 2}, {2, 0}, {2, 3}});
  ASSERT_EQ(g.roots().size(), 1u);
  const LeakRoot& r = g.roots()[0];
  EXPECT_TRUE(r.cyclic);
  EXPECT_EQ(r.representative, 2u);
  EXPECT_EQ(std::vector<uint32_t>(g.members(r).begin(), g.members(r).end()),
            (std::vector<uint32_t>{2, 0, 1}));
  EXPECT_EQ(r.retained_blocks, 4u);
  EXPECT_TRUE(g.is_direct(2));
  EXPECT_FALSE(g.is_direct(0));
  EXPECT_FALSE(g.is_direct(3));
}

TEST(LeakGraphTest, CycleHeldByADirectLeakIsIndirectButListed) {
  // 0 -> 1 <-> 2: the cycle is not a source; 0 is the only direct leak.
  std::vector<LeakedBlock> blocks = Blocks(3);
  LeakGraph g(blocks, {{0, 1}, {1, 2}, {2, 1}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.roots()[0].representative, 0u);
  EXPECT_FALSE(g.roots()[0].cyclic);
  ASSERT_EQ(g.cycles().size(), 1u);
  EXPECT_EQ(g.cycles()[0], (std::vector<uint32_t>{1, 2}));
}

TEST(LeakGraphTest, SharedSubgraphIsNotCountedTwice) {
  // 0 -> 2, 1 -> 2, 2 -> 3: blocks 2 and 3 are retained by neither root alone.
  std::vector<LeakedBlock> blocks = Blocks(4);
  LeakGraph g(blocks, {{0, 2}, {1, 2}, {2, 3}});
  ASSERT_EQ(g.roots().size(), 2u);
  uint64_t total = 0;
  for (const LeakRoot& r : g.roots()) total += r.retained_bytes;
  EXPECT_EQ(total, 16u + 32);
  EXPECT_EQ(g.immediate_dominator(2), UINT32_MAX);
}

TEST(LeakGraphTest, TreeRetainsEverything) {
  std::vector<LeakedBlock> blocks = Blocks(7);
  LeakGraph g(blocks, {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 5}, {2, 6}});
  ASSERT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.roots()[0].retained_blocks, 7u);
}

// A root as the reference computes it: its members in a vector of its own.
struct RefRoot {
  uint32_t representative = 0;
  std::vector<uint32_t> members;
  bool cyclic = false;
  uint64_t retained_bytes = 0;
  uint64_t retained_blocks = 0;
};

// The straightforward computation LeakGraph must match: Boost over every vertex, isolated or not.
struct Reference {
  std::vector<uint32_t> component;
  std::vector<uint8_t> direct;
  std::vector<uint32_t> idom;
  std::vector<RefRoot> roots;
  std::vector<std::vector<uint32_t>> cycles;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edges = std::vector<std::pair<uint32_t, uint32_t>>;

void ReferenceComponents(const std::vector<LeakedBlock>& b, const Edges& edges, Reference& ref) {
  size_t n = b.size();
  Graph g(n);
  for (auto [from, to] : edges) boost::add_edge(from, to, g);
  size_t count = boost::strong_components(g, ref.component.data());
  std::vector<std::vector<uint32_t>> members(count);
  for (uint32_t v = 0; v < n; ++v) members[ref.component[v]].push_back(v);
  std::vector<uint8_t> has_incoming(count, 0);
  for (auto [from, to] : edges) {
    if (ref.component[from] != ref.component[to]) has_incoming[ref.component[to]] = 1;
  }
  for (size_t c = 0; c < count; ++c) {
    std::vector<uint32_t>& m = members[c];
    bool cyclic = m.size() > 1;  // a self pointer is no cycle
    if (cyclic) {
      std::vector<uint32_t> by_address = m;
      std::sort(by_address.begin(), by_address.end(),
                [&b](uint32_t x, uint32_t y) { return b[x].address < b[y].address; });
      ref.cycles.push_back(by_address);
    }
    if (has_incoming[c] != 0) continue;
    std::sort(m.begin(), m.end(), [&b](uint32_t x, uint32_t y) {
      return b[x].seq != b[y].seq ? b[x].seq < b[y].seq : b[x].address < b[y].address;
    });
    ref.roots.push_back({m.front(), m, cyclic, 0, 0});
    ref.direct[m.front()] = 1;
  }
}

void ReferenceDominators(const std::vector<LeakedBlock>& b, const Edges& edges, Reference& ref) {
  size_t n = b.size();
  Graph g(n + 1);
  for (auto [from, to] : edges) {
    if (from != to) boost::add_edge(from, to, g);
  }
  for (const RefRoot& r : ref.roots) boost::add_edge(n, r.representative, g);
  std::vector<Vertex> dom(n + 1, boost::graph_traits<Graph>::null_vertex());
  boost::lengauer_tarjan_dominator_tree(
      g, Vertex(n), boost::make_iterator_property_map(dom.begin(), get(boost::vertex_index, g)));
  for (uint32_t v = 0; v < n; ++v) ref.idom[v] = dom[v] == n ? UINT32_MAX : dom[v];
  // Retained: every vertex adds its size to each dominator above it (quadratic, but obvious).
  std::vector<uint64_t> bytes(n, 0), blocks(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t d = v; d != UINT32_MAX; d = ref.idom[d]) {
      bytes[d] += b[v].size;
      blocks[d] += 1;
    }
  }
  for (RefRoot& r : ref.roots) {
    r.retained_bytes = bytes[r.representative];
    r.retained_blocks = blocks[r.representative];
  }
  std::stable_sort(ref.roots.begin(), ref.roots.end(), [](const RefRoot& x, const RefRoot& y) {
    return x.retained_bytes > y.retained_bytes;
  });
}

Reference Straightforward(const std::vector<LeakedBlock>& blocks, const Edges& edges) {
  Reference ref;
  ref.component.assign(blocks.size(), 0);
  ref.direct.assign(blocks.size(), 0);
  ref.idom.assign(blocks.size(), UINT32_MAX);
  if (blocks.empty()) return ref;
  ReferenceComponents(blocks, edges, ref);
  ReferenceDominators(blocks, edges, ref);
  return ref;
}

// Every public result of `g` equal to `ref`'s; component ids may differ but must partition the
// vertices alike.
void ExpectSameAs(const Reference& ref, const LeakGraph& g, size_t n) {
  ASSERT_EQ(g.roots().size(), ref.roots.size());
  for (size_t i = 0; i < ref.roots.size(); ++i) {
    const LeakRoot& a = g.roots()[i];
    const RefRoot& e = ref.roots[i];
    EXPECT_EQ(a.representative, e.representative) << "root " << i;
    EXPECT_EQ(std::vector<uint32_t>(g.members(a).begin(), g.members(a).end()), e.members)
        << "root " << i;
    EXPECT_EQ(a.cyclic, e.cyclic) << "root " << i;
    EXPECT_EQ(a.retained_bytes, e.retained_bytes) << "root " << i;
    EXPECT_EQ(a.retained_blocks, e.retained_blocks) << "root " << i;
  }
  EXPECT_EQ(g.cycles(), ref.cycles);
  std::vector<uint32_t> same_as(ref.roots.size() + n, UINT32_MAX);  // ref -> ours
  std::vector<uint32_t> ours_to_ref(n + ref.roots.size() + 1, UINT32_MAX);
  for (uint32_t v = 0; v < n; ++v) {
    EXPECT_EQ(g.is_direct(v), ref.direct[v] != 0) << "vertex " << v;
    EXPECT_EQ(g.immediate_dominator(v), ref.idom[v]) << "vertex " << v;
    ASSERT_LT(g.component(v), ours_to_ref.size());
    if (ours_to_ref[g.component(v)] == UINT32_MAX) ours_to_ref[g.component(v)] = ref.component[v];
    EXPECT_EQ(ours_to_ref[g.component(v)], ref.component[v]) << "vertex " << v;
    if (same_as[ref.component[v]] == UINT32_MAX) same_as[ref.component[v]] = g.component(v);
    EXPECT_EQ(same_as[ref.component[v]], g.component(v)) << "vertex " << v;
  }
}

// retained_bytes() before roots() is ever built: the representative's root's, else 0.
void ExpectRetainedBeforeRoots(const Reference& ref, const LeakGraph& fresh, size_t n) {
  std::vector<uint64_t> retained(n, 0);
  for (const RefRoot& r : ref.roots) retained[r.representative] = r.retained_bytes;
  for (uint32_t v = 0; v < n; ++v) {
    EXPECT_EQ(fresh.retained_bytes(v), retained[v]) << "vertex " << v;
  }
}

// The graph over `blocks` against the straightforward computation.
void ExpectSameAsReference(const std::vector<LeakedBlock>& blocks, const Edges& edges) {
  Reference ref = Straightforward(blocks, edges);
  ExpectRetainedBeforeRoots(ref, LeakGraph(blocks, edges), blocks.size());
  ExpectSameAs(ref, LeakGraph(blocks, edges), blocks.size());
}

TEST(LeakGraphTest, IsolatedAndLinkedBlocksMatchTheStraightforwardComputation) {
  // Isolated 0, 3, 6, 9; chain 1 -> 2; cycle 4 <-> 5 held by 7; self pointer 8; equal sizes so
  // ties in retained size keep the roots' vertex order.
  std::vector<LeakedBlock> blocks = Blocks(10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  for (LeakedBlock& b : blocks) b.size = 16;
  Edges edges = {{1, 2}, {4, 5}, {5, 4}, {7, 4}, {8, 8}};
  ExpectSameAsReference(blocks, edges);
  LeakGraph g(blocks, edges);
  EXPECT_TRUE(g.is_direct(0));
  EXPECT_TRUE(g.is_direct(3));
  EXPECT_FALSE(g.is_direct(2));
  EXPECT_EQ(g.immediate_dominator(4), 7u);
  EXPECT_EQ(g.immediate_dominator(6), UINT32_MAX);
  ASSERT_EQ(g.cycles().size(), 1u);  // 4 <-> 5; the self pointer 8 is none
}

TEST(LeakGraphTest, LargeRandomGraphMatchesTheStraightforwardComputation) {
  std::mt19937 random(42);
  for (int round = 0; round < 4; ++round) {
    size_t n = 3000;
    std::vector<LeakedBlock> blocks(n);
    for (size_t i = 0; i < n; ++i) {
      // Few distinct sizes and sequences: many ties in retained size and allocation order.
      blocks[i] = {0x1000 * (i + 1), 16 * (1 + random() % 4), 7,
                   static_cast<uint32_t>(random() % 500)};
    }
    Edges edges;
    size_t edge_count = 300 + 400 * static_cast<size_t>(round);
    for (size_t e = 0; e < edge_count; ++e) {
      uint32_t from = static_cast<uint32_t>(random() % n);
      uint32_t to = random() % 8 == 0 ? from : static_cast<uint32_t>(random() % n);
      edges.emplace_back(from, to);
      if (random() % 4 == 0) edges.emplace_back(from, to);  // duplicates
    }
    SCOPED_TRACE(round);
    ExpectSameAsReference(blocks, edges);
  }
}

TEST(LeakGraphTest, BlocksWithoutEdgesMatchTheStraightforwardComputation) {
  // No edges at all: the graph keeps no per-vertex arrays, every block its own direct root.
  std::mt19937 random(7);
  std::vector<LeakedBlock> blocks(500);
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i] = {0x1000 * (i + 1), 16 * (1 + random() % 4), 7,
                 static_cast<uint32_t>(random() % 50)};
  }
  ExpectSameAsReference(blocks, {});
  LeakGraph g(blocks, Edges{});
  for (uint32_t v = 0; v < blocks.size(); ++v) {
    EXPECT_EQ(g.component(v), v);
    EXPECT_EQ(g.retained_bytes(v), blocks[v].size);
  }
}

TEST(LeakGraphTest, EmptyGraph) {
  std::vector<LeakedBlock> none;
  LeakGraph g(none, {});
  EXPECT_TRUE(g.roots().empty());
}

}  // namespace
}  // namespace heapgraph::graph
