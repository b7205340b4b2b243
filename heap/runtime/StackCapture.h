// heap/runtime/: call-stack capture for the allocation hooks. Uses libunwind's cached DWARF-CFI
// unwinder (unw_backtrace), so stacks continue through code built without frame pointers, such as
// Debian's libstdc++ operator new and glibc. Never allocates from the host's malloc.
#pragma once

#include <cstdint>

namespace heapgraph {

namespace StackCapture {

inline constexpr uint32_t kMaxOwnFrames = 4;  // Capture, the recorder entry, the hook, slack

// Frames whose return address lies in [begin, end) (heapgraph's own code) are skipped at the
// top of every captured stack.
void SetOwnCode(uintptr_t begin, uintptr_t end);
// Selects libunwind's per-thread cache; call once before the first capture.
void Initialize();

// True while the calling thread is inside Capture's unwinder and `return_address` (of a call
// into mmap) lies in the unwinder's own code: the mapping is libunwind's, made for heapgraph
// (not, e.g., by a signal handler that interrupted the unwinder).
bool IsUnwinderCall(uintptr_t return_address);

// Return addresses of the calling thread, innermost first, own frames skipped. `out` must hold
// max_depth + kMaxOwnFrames entries. Returns the number of frames stored (<= max_depth).
uint32_t Capture(uintptr_t* out, uint32_t max_depth);

}  // namespace StackCapture

}  // namespace heapgraph
