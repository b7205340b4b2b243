#include "heap/platform/ThreadStop.h"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

namespace heapgraph {

bool ThreadStop::Prepare() {
  started_by_ = 0;
  if (!stop_.StillOurs()) (void)stop_.Adopt(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  fd_ = stop_.StillOurs() ? stop_.fd() : -1;
  if (fd_ < 0) return false;
  uint64_t earlier;
  (void)!read(fd_, &earlier, sizeof(earlier));  // a stop of an earlier thread ends none now
  return true;
}

void ThreadStop::Started(pthread_t thread) {
  thread_ = thread;
  started_by_ = getpid();
  requested_ = false;
}

bool ThreadStop::Request() {
  if (started_by_ == 0 || started_by_ != getpid() || !stop_.StillOurs()) return false;
  if (requested_) return true;
  const uint64_t one = 1;
  if (write(stop_.fd(), &one, sizeof(one)) != static_cast<ssize_t>(sizeof(one))) return false;
  requested_ = true;
  return true;
}

bool ThreadStop::Stop(uint32_t wait_ms) {
  if (!Request()) return false;
  started_by_ = 0;
  requested_ = false;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += wait_ms / 1000;
  deadline.tv_nsec += static_cast<long>(wait_ms % 1000) * 1000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000;
  }
  return pthread_clockjoin_np(thread_, nullptr, CLOCK_MONOTONIC, &deadline) == 0;
}

}  // namespace heapgraph
