#include "heap/session/SessionMonitor.h"

#include <poll.h>
#include <time.h>

#include <cerrno>

#include "heap/platform/ToolThread.h"
#include "heap/session/DumpRetention.h"
#include "heap/session/SessionFile.h"

namespace heapgraph {
namespace {

SessionMonitor::Settings g_settings;

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

// Sleeps `ms` (forever when 0) or until the wake descriptor is readable; then it is watched no
// more and on_wake() has run. A descriptor poll() refuses (closed by the program) is dropped too:
// on_wake()'s thread tells the pipe is gone.
void SleepMs(uint32_t ms, int* wake_fd) {
  const uint64_t end = NowMs() + ms;
  for (;;) {
    uint64_t now = NowMs();
    if (ms != 0 && now >= end) return;
    int timeout = ms == 0 ? -1 : static_cast<int>(end - now);
    if (*wake_fd < 0) {
      if (ms == 0) return;
      struct timespec delay = {timeout / 1000, static_cast<long>(timeout % 1000) * 1000000};
      (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &delay, nullptr);
      continue;
    }
    struct pollfd watched = {*wake_fd, POLLIN, 0};
    int ready = poll(&watched, 1, timeout);
    if (ready < 0 && errno == EINTR) continue;
    if (ready != 0) {
      *wake_fd = -1;
      g_settings.on_wake();
    }
  }
}

void* Main(void*) {
  const SessionMonitor::Settings& s = g_settings;
  if (s.on_thread_start != nullptr) s.on_thread_start();
  if (s.interval_ms != 0) Beat(/*read_cgroup=*/false);  // SessionFile::Create just read it
  if (s.root_fd >= 0) DumpRetention::Run(s.root_fd, s.own_name, s.executable, s.keep);
  int wake_fd = s.on_wake != nullptr ? s.wake_fd : -1;
  if (s.interval_ms == 0) {
    SleepMs(0, &wake_fd);  // until the wake, if any
    return nullptr;
  }
  for (;;) {
    SleepMs(s.interval_ms, &wake_fd);
    Beat();
  }
}

}  // namespace

bool SessionMonitor::Start(const Settings& settings) {
  g_settings = settings;
  return ToolThread::Start(&Main, nullptr, 256 * 1024) == 0;
}

}  // namespace heapgraph
