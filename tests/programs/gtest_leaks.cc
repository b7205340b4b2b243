// tests/gtest/LeakCheckListenerTest's child: a GoogleTest suite under heapgraph::gtest_main with
// one leaking test among clean ones, a first-use cache, an opt-out, a tolerated leak and a suite
// the HEAPGRAPH_GTEST_SKIP option names.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "heapgraph/gtest.h"
#include "heapgraph/heapgraph.h"

namespace {

// Escapes the optimizer: the leaked pointer is stored, then forgotten.
void* volatile g_sink;

__attribute__((noinline)) void LeakOneBlock(size_t size) {
  g_sink = malloc(size);
  g_sink = nullptr;
}

// A cache filled on first use and kept for the program's lifetime (reachable: no leak at exit),
// but allocated during the first test that uses it.
std::vector<std::string>* g_cache;

__attribute__((noinline)) const std::string& CachedName() {
  if (g_cache == nullptr) {
    g_cache = new std::vector<std::string>{std::string(100, 'c')};
    // The first use also drops scratch buffers: a per-test leak only on first use (four, so a
    // stale copy of the last one on the stack cannot hide them all from a conservative scan).
    for (int i = 0; i < 4; ++i) LeakOneBlock(48);
  }
  return g_cache->front();
}

}  // namespace

TEST(Clean, Vector) {
  std::vector<int> v(1000, 1);
  EXPECT_EQ(v.size(), 1000u);
}

TEST(Clean, UniquePtr) {
  auto p = std::make_unique<std::string>(200, 'x');
  EXPECT_EQ(p->size(), 200u);
}

TEST(Leaky, ForgetsABlock) {
  LeakOneBlock(1234);
}

TEST(Cache, FirstUse) {
  EXPECT_EQ(CachedName().size(), 100u);
}

TEST(OptOut, Macro) {
  HEAPGRAPH_NO_LEAK_CHECK();
  LeakOneBlock(77);
}

TEST(Tolerance, TwoBlocks) {
  HEAPGRAPH_EXPECT_N_LEAKS(2);
  LeakOneBlock(55);
  LeakOneBlock(66);
}

TEST(SkippedSuite, Leaks) {
  LeakOneBlock(99);
}

class FixtureLeak : public testing::Test {
 protected:
  void TearDown() override { LeakOneBlock(321); }
};

TEST_F(FixtureLeak, InTearDown) {}

#ifdef HEAPGRAPH_GTEST_LINKED
// Bad input: a checkpoint never set is one line on stderr, and the check covers every block.
TEST(BadInput, UnknownCheckpoint) {
  HEAPGRAPH_NO_LEAK_CHECK();
  heapgraph_leak_summary summary;
  EXPECT_GE(heapgraph_check_leaks_since("never-set", nullptr, nullptr, &summary), 0);
  EXPECT_EQ(summary.ok, 1);
}
#endif
