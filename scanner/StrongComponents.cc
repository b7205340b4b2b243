#include "scanner/StrongComponents.h"

#include <algorithm>

namespace heapgraph::scanner {

StrongComponents::StrongComponents(uint32_t n, std::span<const std::pair<uint32_t, uint32_t>> edges)
    : offsets_(size_t{n} + 1, 0),
      targets_(edges.size()),
      index_(n, kNone),
      low_(n, 0),
      component_(n, kNone),
      on_stack_(n, 0) {
  for (auto [from, to] : edges) ++offsets_[from + 1];
  for (uint32_t v = 0; v < n; ++v) offsets_[v + 1] += offsets_[v];
  Vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
  for (auto [from, to] : edges) targets_[next[from]++] = to;
  cyclic_.reserve(16);
  for (uint32_t v = 0; v < n; ++v) {
    if (index_[v] == kNone) Visit(v);
  }
  for (auto [from, to] : edges) {
    if (from == to) cyclic_[component_[from]] = 1;
  }
}

void StrongComponents::Visit(uint32_t root) {
  auto enter = [this](uint32_t v) {
    index_[v] = low_[v] = next_index_++;
    stack_.push_back(v);
    on_stack_[v] = 1;
    calls_.push_back({v, offsets_[v]});
  };
  enter(root);
  while (!calls_.empty()) {
    auto& [v, position] = calls_.back();
    if (position < offsets_[v + 1]) {
      uint32_t w = targets_[position++];
      if (index_[w] == kNone) {
        enter(w);  // invalidates v and position: re-read at the top
      } else if (on_stack_[w] != 0) {
        low_[v] = std::min(low_[v], index_[w]);
      }
      continue;
    }
    uint32_t done = v;
    calls_.pop_back();
    if (!calls_.empty())
      low_[calls_.back().first] = std::min(low_[calls_.back().first], low_[done]);
    if (low_[done] != index_[done]) continue;
    uint32_t size = 0, w;
    do {
      w = stack_.back();
      stack_.pop_back();
      on_stack_[w] = 0;
      component_[w] = count_;
      ++size;
    } while (w != done);
    cyclic_.push_back(size > 1 ? 1 : 0);
    ++count_;
  }
}

}  // namespace heapgraph::scanner
