// roots/: the signals a fault raises in the faulting thread (SIGSEGV, SIGBUS, ...). roots/' helper
// threads and handlers never block them: a blocked synchronous signal turns a fault into a hang.
// Includes only <signal.h>; no allocation.
#pragma once

#include <signal.h>

namespace heapgraph::roots {

// Removes the synchronous signals from `set`.
inline void RemoveSynchronousSignals(sigset_t* set) {
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS}) {
    sigdelset(set, signal);
  }
}

}  // namespace heapgraph::roots
