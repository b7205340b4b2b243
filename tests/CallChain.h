// tests: call chains of real frames for the unwinder tests (StackCaptureTest, DwarfWalkTest):
// Chain<Leaf>(depth) calls Leaf() `depth` frames further down, each frame a distinct noinline call
// that cannot be a tail call; ThroughAlloca<Leaf>(n) adds a frame kept by rbp (alloca of a run-time
// size) above such a chain. Both return what Leaf returned.
#pragma once

#include <cstddef>

namespace heapgraph::testing_chain {

template <auto Leaf>
__attribute__((noinline)) decltype(Leaf()) Chain(int depth) {
  decltype(Leaf()) result = depth == 0 ? Leaf() : Chain<Leaf>(depth - 1);
  asm volatile("" ::: "memory");
  return result;
}

template <auto Leaf>
__attribute__((noinline)) decltype(Leaf()) ThroughAlloca(int n) {
  auto* scratch = static_cast<volatile char*>(__builtin_alloca(static_cast<size_t>(n) + 16));
  scratch[0] = 1;
  auto result = Chain<Leaf>(n % 3 + scratch[0]);
  asm volatile("" ::: "memory");
  return result;
}

}  // namespace heapgraph::testing_chain
