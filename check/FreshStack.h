// check/: runs a function on a stack of its own (mapped with a raw syscall, so neither recorded
// nor reachable from the program). A leak check runs there so that its frames never overlay the
// program's stack region: the uninitialized slots of frames laid over a region keep whatever
// earlier calls left there (the allocation hooks leave block addresses), and a conservative scan
// of the program's stack would read them as references.
#pragma once

#include <cstddef>

namespace heapgraph::report {

namespace FreshStack {

inline constexpr size_t kDefaultSize = 16u << 20;

// Runs body(argument) on a fresh stack and returns true; false (nothing run) if no stack could
// be mapped. `process_exits`: the stack is left mapped for the exit (GuardedStack::LeaveToExit).
bool Run(void (*body)(void*), void* argument, size_t size = kDefaultSize,
         bool process_exits = false);

}  // namespace FreshStack

}  // namespace heapgraph::report
