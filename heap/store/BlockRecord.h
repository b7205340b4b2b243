// heap/store/: one live block as the trees hand it in and out (not the on-disk layout).
#pragma once

#include <cstdint>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

struct BlockRecord {
  uint64_t address = 0;
  uint64_t size = 0;
  uint32_t stack = 0;
  uint32_t seq = 0;
  format::AllocFunction function = format::AllocFunction::kNone;
  // Never reported by a leak check, scanned as a root (format::HashSlot::kIgnoredBit; heap blocks
  // only: the VM-region tree does not keep it).
  bool ignored = false;
};

}  // namespace heapgraph
