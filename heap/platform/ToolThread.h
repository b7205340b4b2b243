// heap/platform/: starting heapgraph's own threads (session heartbeat, pressure watcher, leak-check
// signal watcher). May include libc only.
#pragma once

#include <pthread.h>

namespace heapgraph {

namespace ToolThread {

// Starts a thread running main(arg) with every signal blocked, so that a process-directed signal
// the program blocks in its own threads (to read it with sigwait or signalfd) is never delivered to
// a heapgraph thread instead. `stack_size` 0: the default. Detached, unless `joinable` is given:
// then it receives the thread, which the caller must join. Returns 0 or the pthread_create error.
// Never called from inside a hook.
int Start(void* (*main)(void*), void* arg, size_t stack_size = 0, pthread_t* joinable = nullptr);

}  // namespace ToolThread

}  // namespace heapgraph
