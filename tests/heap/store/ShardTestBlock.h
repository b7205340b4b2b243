// tests/heap/store: the block the store tests (SplayShardTest, SlabShardTest, ShardedTreeTest)
// insert. Every field is set, stack and seq nonzero by default, so that each must survive the trip
// through a node or a slot.
#pragma once

#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

inline BlockRecord ShardTestBlock(uint64_t address, uint64_t size, uint32_t stack = 7,
                                  uint32_t seq = 9,
                                  format::AllocFunction function = format::AllocFunction::kMalloc) {
  BlockRecord b;
  b.address = address;
  b.size = size;
  b.stack = stack;
  b.seq = seq;
  b.function = function;
  return b;
}

}  // namespace heapgraph
