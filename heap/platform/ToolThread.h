// heap/platform/: starting heapgraph's own threads (session heartbeat, pressure watcher, leak-check
// signal watcher). May include libc and heap/platform only.
#pragma once

#include <pthread.h>

#include <cstddef>

#include "heap/platform/ThreadStop.h"

namespace heapgraph {

namespace ToolThread {

// Starts a thread running main(arg) with every signal blocked, so that a process-directed signal
// the program blocks in its own threads (to read it with sigwait or signalfd) is never delivered to
// a heapgraph thread instead. `stack_size` 0: the default. Detached, unless `stop` is given and
// can be prepared (ThreadStop): then joinable, and ended by stop->Stop(). Returns 0 or the
// pthread_create error. Never called from inside a hook.
int Start(void* (*main)(void*), void* arg, size_t stack_size = 0, ThreadStop* stop = nullptr);

}  // namespace ToolThread

}  // namespace heapgraph
