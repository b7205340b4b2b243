// heap/platform/: ending one of heapgraph's own threads (ToolThread) from another thread of the
// process that started it. The thread, started with a ThreadStop, is joinable and watches fd() in
// its waits (readable once Stop() ran) and returns when it is; Stop() writes it and joins the
// thread for at most `wait_ms`. A forked child's copy never ends its parent's thread (the child
// has no such thread). Async-signal-unsafe; never allocates. Includes libc only.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>

#include "heap/platform/HighDescriptor.h"

namespace heapgraph {

class ThreadStop {
 public:
  // Before the thread starts (ToolThread::Start calls it): the descriptor, made once (an eventfd
  // above the host's numbers) and emptied of an earlier stop. False without it: the thread then
  // starts detached and is never stopped.
  bool Prepare();
  // What the thread polls for POLLIN; -1 when it has none (watch nothing then).
  int fd() const { return fd_; }
  // After the thread started: `thread` (joinable) is the one Stop() ends.
  void Started(pthread_t thread);
  // Asks the thread this process started to end (writes fd()) and returns at once: the caller
  // does other work while it ends, then Stop() joins it. False when there is none (never started,
  // already stopped, started by a parent before a fork).
  bool Request();
  // Ends the thread this process started (Request() if not done yet): true once it has ended
  // within `wait_ms`; false when there is none or it did not end in time (it ends later,
  // detached from nobody).
  bool Stop(uint32_t wait_ms);

 private:
  HighDescriptor stop_;
  int fd_ = -1;
  pthread_t thread_{};
  pid_t started_by_ = 0;
  bool requested_ = false;  // Request() wrote fd() for the thread started_by_ started
};

}  // namespace heapgraph
