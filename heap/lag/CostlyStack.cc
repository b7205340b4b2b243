#include "heap/lag/CostlyStack.h"

namespace heapgraph {

CostlyChoice CostlyStack::Choose(const CostlySample* samples, uint32_t count) {
  CostlyChoice best;
  // Newest first, so that a top frame first reaching the best count is the more recent one and
  // a later (older) one must beat it strictly.
  for (uint32_t i = count; i-- > 0;) {
    uint32_t repeats = 0;
    bool newer_seen = false;
    for (uint32_t j = 0; j < count; ++j) {
      if (samples[j].top != samples[i].top) continue;
      ++repeats;
      if (j > i) newer_seen = true;
    }
    if (newer_seen) continue;  // this top frame was weighed at its newest sample
    if (repeats > best.repeats) best = {samples[i].stack, repeats};
  }
  return best;
}

}  // namespace heapgraph
