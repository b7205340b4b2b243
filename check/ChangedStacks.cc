#include "check/ChangedStacks.h"

namespace heapgraph::report {

ChangedStacks& ChangedStacks::Process() {
  static ChangedStacks* stacks = new ChangedStacks;  // never destroyed: checks run at exit
  return *stacks;
}

std::vector<bool> ChangedStacks::Grown(const std::vector<scanner::LeakedBlock>& leaked) {
  std::unordered_map<uint32_t, Totals> now;
  for (const scanner::LeakedBlock& block : leaked) {
    Totals& totals = now[block.stack];
    ++totals.blocks;
    totals.bytes += block.size;
  }
  std::vector<bool> grown(leaked.size());
  for (size_t i = 0; i < leaked.size(); ++i) {
    const Totals& current = now[leaked[i].stack];
    auto before = previous_.find(leaked[i].stack);
    grown[i] = before == previous_.end() || current.blocks > before->second.blocks ||
               current.bytes > before->second.bytes;
  }
  previous_ = std::move(now);
  return grown;
}

}  // namespace heapgraph::report
