// heap/lag/: the most time-consuming stack of a lag, as WeChat's monitor chooses it from its ring
// of recent samples (seed 003): samples with the same top frame are the same stack; the number of
// samples of a top frame approximates the time spent there; among top frames sampled equally
// often, the most recent wins. Pure: no I/O, no allocation. Includes libc only.
#pragma once

#include <cstdint>

namespace heapgraph {

struct CostlySample {
  uint32_t stack;  // stacks.bin id
  uintptr_t top;   // the interrupted frame
};

struct CostlyChoice {
  uint32_t stack = 0;    // the chosen sample's stack (its most recent one of that top frame)
  uint32_t repeats = 0;  // samples with its top frame; 0: no samples
};

namespace CostlyStack {

// `samples` oldest first; `count` <= 64.
CostlyChoice Choose(const CostlySample* samples, uint32_t count);

}  // namespace CostlyStack

}  // namespace heapgraph
