#include "heap/session/SessionMonitor.h"

#include <poll.h>
#include <time.h>

#include <cerrno>
#include <cstdint>

#include "heap/platform/ThreadStop.h"
#include "heap/platform/ToolThread.h"
#include "heap/session/DumpRetention.h"
#include "heap/session/SessionFile.h"

namespace heapgraph {
namespace {

SessionMonitor::Settings g_settings;
constinit ThreadStop g_stop;  // a stoppable monitor's (used by the recorder's constructor)

void Beat(bool read_cgroup = true) {
  const SessionMonitor::Settings& s = g_settings;
  s.session->Beat(s.allocation_progress != nullptr ? s.allocation_progress() : UINT64_MAX,
                  read_cgroup);
}

uint64_t NowMs() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1000000;
}

// Sleeps `ms` (when 0: until the wake, or at once when there is none to watch) or until the wake
// descriptor is readable; then it is watched no more and on_wake() has run. A descriptor poll()
// refuses (closed by the program) is dropped too: on_wake()'s thread tells the pipe is gone.
// Returns true when Stop() asked the thread to end
// (`*stop_fd` readable; -1: none, or no longer watched because poll() refused it).
bool SleepMs(uint32_t ms, int* wake_fd, int* stop_fd) {
  const uint64_t end = NowMs() + ms;
  for (;;) {
    uint64_t now = NowMs();
    if (ms != 0 && now >= end) return false;
    int timeout = ms == 0 ? -1 : static_cast<int>(end - now);
    if (ms == 0 && *wake_fd < 0) return false;
    if (*wake_fd < 0 && *stop_fd < 0) {
      struct timespec delay = {timeout / 1000, static_cast<long>(timeout % 1000) * 1000000};
      (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &delay, nullptr);
      continue;
    }
    struct pollfd watched[2] = {{*wake_fd, POLLIN, 0}, {*stop_fd, POLLIN, 0}};
    int ready = poll(watched, 2, timeout);  // a negative fd is ignored
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {  // not expected: as if both were refused
      watched[0].revents = *wake_fd >= 0 ? POLLNVAL : 0;
      watched[1].revents = *stop_fd >= 0 ? POLLNVAL : 0;
    }
    if (watched[1].revents != 0) {
      if ((watched[1].revents & POLLIN) != 0) return true;
      *stop_fd = -1;  // closed by the program: never stopped
    }
    if (watched[0].revents != 0) {
      *wake_fd = -1;
      g_settings.on_wake();
      if (ms == 0) return false;
    }
  }
}

// `stop`: the monitor's ThreadStop, or null when it is not stoppable.
void* Main(void* stop) {
  const SessionMonitor::Settings& s = g_settings;
  if (s.on_thread_start != nullptr) s.on_thread_start();
  if (s.interval_ms != 0) Beat(/*read_cgroup=*/false);  // SessionFile::Create just read it
  if (s.root_fd >= 0) DumpRetention::Run(s.root_fd, s.own_name, s.executable, s.keep);
  int wake_fd = s.on_wake != nullptr ? s.wake_fd : -1;
  int stop_fd = stop != nullptr ? static_cast<const ThreadStop*>(stop)->fd() : -1;
  if (s.interval_ms == 0) {
    SleepMs(0, &wake_fd, &stop_fd);  // until the wake or the stop, if any
    return nullptr;
  }
  while (!SleepMs(s.interval_ms, &wake_fd, &stop_fd)) Beat();
  return nullptr;
}

}  // namespace

bool SessionMonitor::Start(const Settings& settings) {
  g_settings = settings;
  ThreadStop* stop = settings.stoppable ? &g_stop : nullptr;
  return ToolThread::Start(&Main, stop, 256 * 1024, stop) == 0;
}

void SessionMonitor::RequestStop() {
  (void)g_stop.Request();
}

bool SessionMonitor::Stop() {
  return g_stop.Stop(kStopWaitMs);
}

}  // namespace heapgraph
