// scanner/types/: the clang Blocks ABI as the runtime lays it out in memory (Block_private.h of
// libBlocksRuntime, the same as Apple's): a block's header, its descriptor, and the heap structure
// of a __block variable. Plain data; no functions. May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>

namespace heapgraph::scanner::types::blocks {

// Block_layout.flags
constexpr uint32_t kRefcountMask = 0xffff;
constexpr uint32_t kNeedsFree = 1u << 24;
constexpr uint32_t kHasCopyDispose = 1u << 25;
constexpr uint32_t kHasCtor = 1u << 26;
constexpr uint32_t kIsGlobal = 1u << 28;
constexpr uint32_t kHasDescriptor = 1u << 29;

struct Descriptor {
  uint64_t reserved;  // 0
  uint64_t size;      // of the whole Block_layout, captures included
  uint64_t copy;      // iff kHasCopyDispose: void (*)(void* dst, void* src)
  uint64_t dispose;   // iff kHasCopyDispose: void (*)(void* block)
};

struct Layout {
  uint64_t isa;  // &_NSConcreteMallocBlock for a heap block
  uint32_t flags;
  uint32_t reserved;
  uint64_t invoke;
  uint64_t descriptor;  // const Descriptor*
  // captures follow, from offset 32
};
constexpr uint32_t kFirstCapture = sizeof(Layout);

// A __block variable once copied to the heap (Block_byref).
struct Byref {
  uint64_t isa;
  uint64_t forwarding;  // the heap byref itself
  uint32_t flags;       // kByrefHasCopyDispose, refcount
  uint32_t size;        // of the whole byref, variable included
  uint64_t keep;        // iff kByrefHasCopyDispose: void (*)(void* dst, void* src)
  uint64_t destroy;     // iff kByrefHasCopyDispose: void (*)(void* byref)
  // the variable follows (at 24 without helpers, at 40 with them)
};
constexpr uint32_t kByrefHasCopyDispose = 1u << 25;
constexpr uint32_t kByrefVariableWithHelpers = sizeof(Byref);
constexpr uint32_t kByrefVariableWithoutHelpers = 24;

}  // namespace heapgraph::scanner::types::blocks
