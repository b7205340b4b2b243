#include "heap/platform/ProcessStartTicks.h"

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

uint64_t ProcessStartTicks::OfSelf() {
  return ReadStat("/proc/self/stat");
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
