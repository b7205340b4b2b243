#include "heap/platform/ToolThread.h"

#include <signal.h>

namespace heapgraph {

int ToolThread::Start(void* (*main)(void*), void* arg, size_t stack_size, ThreadStop* stop) {
  const bool joinable = stop != nullptr && stop->Prepare();
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (!joinable) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (stack_size != 0) pthread_attr_setstacksize(&attr, stack_size);
  // The new thread inherits the creating thread's mask, which is restored right after.
  sigset_t all;
  sigset_t saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pthread_t thread;
  int error = pthread_create(&thread, &attr, main, arg);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  pthread_attr_destroy(&attr);
  if (error == 0 && joinable) stop->Started(thread);
  return error;
}

}  // namespace heapgraph
