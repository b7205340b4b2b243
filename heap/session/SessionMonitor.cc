#include "heap/session/SessionMonitor.h"

#include <time.h>

#include <cerrno>

#include "heap/platform/ToolThread.h"
#include "heap/session/DumpRetention.h"
#include "heap/session/SessionFile.h"

namespace heapgraph {
namespace {

SessionMonitor::Settings g_settings;

void Beat() {
  const SessionMonitor::Settings& s = g_settings;
  s.session->Beat(s.allocation_progress != nullptr ? s.allocation_progress() : UINT64_MAX);
}

void SleepMs(uint32_t ms) {
  struct timespec delay = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &delay, &delay) == EINTR) {
  }
}

void* Main(void*) {
  const SessionMonitor::Settings& s = g_settings;
  if (s.on_thread_start != nullptr) s.on_thread_start();
  if (s.interval_ms != 0) Beat();
  if (s.root_fd >= 0) DumpRetention::Run(s.root_fd, s.own_name, s.executable, s.keep);
  if (s.interval_ms == 0) return nullptr;
  for (;;) {
    SleepMs(s.interval_ms);
    Beat();
  }
}

}  // namespace

bool SessionMonitor::Start(const Settings& settings) {
  g_settings = settings;
  return ToolThread::Start(&Main, nullptr, 256 * 1024) == 0;
}

}  // namespace heapgraph
