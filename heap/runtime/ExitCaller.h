// heap/runtime/: where the program called exit(), for the at-exit leak check. Frames below that
// point (exit's own, glibc's exit handlers', the at-exit check's) were laid over the dead frames of
// the program's earlier calls, and their unwritten slots still hold what those calls left there:
// block addresses that would keep leaks alive. LeakSanitizer likewise scans the exiting thread's
// stack only from where exit was entered. Only for a thread inside exit(); uses libunwind (the
// frames of an at-exit handler include crtstuff's, which have no FDE for the recorder's rule walk)
// and .eh_frame's function ranges (EhFrameRules), not for hooks. No allocation.
#pragma once

#include <cstdint>

namespace heapgraph {

namespace ExitCaller {

// The stack pointer of the frame that called exit() (the canonical frame address of exit's
// frame) on the calling thread, found by unwinding from here; 0 when exit() is not on this
// thread's stack or the stack cannot be unwound.
uint64_t StackPointer();

}  // namespace ExitCaller

}  // namespace heapgraph
