#include "heap/platform/ProcessStartTicks.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/platform/SmallFile.h"

namespace heapgraph {
namespace {

uint64_t ReadStat(const char* path) {
  char text[1024];
  return SmallFile::Read(path, text, sizeof(text)) > 0 ? ProcessStartTicks::Parse(text) : 0;
}

}  // namespace

// A process's start never changes: read once per process (a forked child has another pid and
// reads its own). The ticks are stored before the pid that names them, and read after it.
uint64_t ProcessStartTicks::OfSelf() {
  static std::atomic<int> known_pid{0};
  static std::atomic<uint64_t> known_ticks{0};
  const int pid = getpid();
  if (known_pid.load(std::memory_order_acquire) == pid) {
    return known_ticks.load(std::memory_order_relaxed);
  }
  uint64_t ticks = ReadStat("/proc/self/stat");
  if (ticks != 0) {
    known_ticks.store(ticks, std::memory_order_relaxed);
    known_pid.store(pid, std::memory_order_release);
  }
  return ticks;
}

uint64_t ProcessStartTicks::Of(int pid) {
  if (pid <= 0) return 0;
  LineBuffer path;
  path.Append("/proc/").AppendDecimal(static_cast<uint64_t>(pid)).Append("/stat").AppendChar('\0');
  return ReadStat(path.data());
}

uint64_t ProcessStartTicks::Parse(const char* stat_text) {
  // Field 2 (comm) may contain spaces and parentheses; fields are counted after its last ')'.
  const char* p = strrchr(stat_text, ')');
  if (p == nullptr) return 0;
  int field = 2;
  for (; *p != '\0' && field < 22; ++p) {
    if (*p == ' ') ++field;
  }
  uint64_t ticks = 0;
  for (; *p >= '0' && *p <= '9'; ++p) ticks = ticks * 10 + static_cast<uint64_t>(*p - '0');
  return ticks;
}

}  // namespace heapgraph
