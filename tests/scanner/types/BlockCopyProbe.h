// tests/scanner/types: whether this process's _Block_copy really copies the block_shapes
// fixture's Blocks to the heap. In a process where another Blocks runtime was bound first
// (GnuObjcReaderTest loads GNUstep's libobjc RTLD_GLOBAL, which defines _Block_copy too), the
// copy does not know the fixture's stack isa and returns the Block where it is, so a test would
// read a dead stack frame as a heap block. ctest runs each test in its own process. Test-only.
#pragma once

#include <pthread.h>

#include <cstdint>

namespace heapgraph::scanner::types {

// Whether `p` lies in the calling thread's stack.
inline bool OnThisThreadsStack(const void* p) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* base = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  auto at = reinterpret_cast<uintptr_t>(p), begin = reinterpret_cast<uintptr_t>(base);
  return at >= begin && at < begin + size;
}

// Makes one Block through `make(arg)`; true if it came back on the stack (then not released).
inline bool BlockCopyLeavesStackBlocks(void* (*make)(void*), void (*release)(void*), void* arg) {
  void* block = make(arg);
  if (OnThisThreadsStack(block)) return true;
  release(block);
  return false;
}

inline constexpr const char* kStackBlocksSkip =
    "_Block_copy left a Block on the stack: another Blocks runtime (GNUstep libobjc?) is bound "
    "in this process first; run this suite in a process of its own";

}  // namespace heapgraph::scanner::types
