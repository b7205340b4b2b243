// heap/runtime/: the part of the calling thread's own stack that a stack walk has proven, so that
// WalkMemo re-reads only words that stay mapped while the thread lives. The thread's own stack is
// the process's main stack (top: __libc_stack_end) or, for a thread glibc started, the block it
// mapped with the thread's static TLS at its top (top: the address of the recorder's own
// initial-exec TLS, `anchor`). Neither shrinks nor moves while the thread lives, unlike a
// coroutine or alternate stack, which may be freed and mapped again smaller at the same address.
// Invariant: [low, high] (empty until the first proof) lies in the thread's own stack: a walk from
// stack pointer `low` climbed frame by frame to the thread's outermost frame (the rule `end`)
// within kTopWindow of the top. Lives in initial-exec TLS (zero-initialized: empty); no allocation,
// no lock; its only system calls are gettid and getpid, once per thread.
#pragma once

#include <cstdint>

namespace heapgraph {

class HomeStack {
 public:
  // The outermost frame of the thread's own stack lies this close below its top.
  static constexpr uintptr_t kTopWindow = uintptr_t{64} << 10;

  // True when every word in [lowest, highest] lies in the proven part of the thread's own stack.
  bool Covers(uintptr_t lowest, uintptr_t highest) const {
    return high_ != 0 && lowest >= low_ && highest <= high_;
  }
  // A walk from stack pointer `start_sp` ended at the outermost frame, whose stack pointer is
  // `end_sp`: when that frame lies within kTopWindow below the top, [start_sp, top] is proven.
  void Prove(uintptr_t start_sp, uintptr_t end_sp, const void* anchor);

 private:
  uintptr_t low_;
  uintptr_t high_;  // 0: nothing proven yet
  uintptr_t top_;   // 0: not looked up yet
};

}  // namespace heapgraph
