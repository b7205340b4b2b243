// heap/runtime/: one leak check at a time in a process, and no fork() in the middle of one. A
// check's working memory (its fresh stack, the scan's buffers, the result's arrays, the report)
// is cut out of the roots only by that check: a second check running at the same time, or a
// child forked while a check runs (it inherits that memory as plain memory, without the thread
// that owns it), would scan it as roots and miss the leaks whose addresses it holds. So a check
// waits for the one running (the at-exit check, a signal check and API checks are all asked for
// and none is dropped), and the recorder's fork prepare handler waits too, so that a child never
// starts with a check's memory still in use. In libheapgraph.so (a single instance even when the
// checker is linked into the program as well), reached through heapgraph_internal_begin_check
// (heap/plugin/ScanInterface.h). No allocation.
// A thread in Acquire or holding the lock is listed with the program's frame that asked for the
// check (heap/runtime/CheckEntrants), unless an outer call listed it already, until after
// Release woke the next waiter: the check that runs meanwhile cuts its frames below that one.
#pragma once

#include <cstdint>

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace CheckLock {

// Waits until every thread that asked before is done, then holds the lock (first come, first
// served: a thread checking in a loop never starves a fork). False, at once, when the calling
// thread already holds or awaits it (a check started from a signal handler inside a check).
bool Acquire(uint64_t program_stack_pointer);
void Release();

// fork(), from the recorder's pthread_atfork handlers: the prepare handler waits for a running
// check (unless the forking thread is the one checking); the child gets the lock free (its
// checking thread, if any, did not survive the fork) except when that thread is the forking one.
void BeforeFork();
void AfterForkParent();
void AfterForkChild();

}  // namespace CheckLock

}  // namespace heapgraph
