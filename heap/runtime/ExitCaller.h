// heap/runtime/: where the program called exit(), for the at-exit leak check. Frames below that
// point (exit's own, glibc's exit handlers', the at-exit check's) were laid over the dead frames of
// the program's earlier calls, and their unwritten slots still hold what those calls left there:
// block addresses that would keep leaks alive. LeakSanitizer likewise scans the exiting thread's
// stack only from where exit was entered. Only for a thread inside exit(); not for hooks. No
// allocation. Three ways, cheapest first: the recorder's exit() wrapper notes its caller
// (NoteCall); glibc's exit called inside glibc when main returns left one return address into
// exit on the main thread's stack, found by a search up to the stack's top and turned into exit's
// frame address by its .eh_frame rule (EhFrameRules); else the complete walk (DwarfWalk) climbs
// to it (an at-exit handler's frames include crtstuff's, which have no FDE: that walk steps them
// by frame pointer).
#pragma once

#include <cstdint>

namespace heapgraph {

namespace ExitCaller {

// The stack pointer of the frame that called exit() (the canonical frame address of exit's
// frame) on the calling thread, found by unwinding from here; 0 when exit() is not on this
// thread's stack or the stack cannot be unwound.
uint64_t StackPointer();

// The recorder's exit() wrapper, on its way into glibc's exit: the calling thread's caller called
// exit() with `caller_stack_pointer` (the wrapper's canonical frame address). Async-signal-safe.
void NoteCall(uint64_t caller_stack_pointer);

}  // namespace ExitCaller

}  // namespace heapgraph
