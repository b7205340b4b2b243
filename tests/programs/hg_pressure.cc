// tests/programs: grows toward a memory limit for the pressure watcher's tests
// (RecorderPressureTest).
//   hg_pressure LIMIT_MIB TARGET_PERCENT
// First keeps 1000 Widget and 500 shapes::Gadget objects (polymorphic: their first word is a
// vptr) and prints "widgets <n> gadgets <n>". Then mallocs 4 MiB blocks and touches every page
// until its RSS reaches TARGET_PERCENT of LIMIT_MIB, a few milliseconds apart; prints
// "grown <rss bytes> blocks <n>", "ready <pid>", and waits for stdin to close.
// With HG_PRESSURE_HOST_FILE=PATH it first plays a host that closes every descriptor from 3 up
// (closefrom) and then reuses every number from 3 up for a file of its own, PATH.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "ProgramSupport.h"

struct Widget {
  virtual ~Widget() = default;
  virtual int Id() const { return 1; }
  long value = 7;
};

namespace shapes {
struct Base {
  virtual ~Base() = default;
};
struct Gadget : Base {
  int Id() const { return 2; }
  char payload[40] = {};
};
}  // namespace shapes

namespace {

Widget* g_widgets[1000];
shapes::Gadget* g_gadgets[500];
void* g_blocks[4096];

int g_statm = -1;  // /proc/self/statm, opened before the host used up every number

uint64_t Rss() {
  char text[256] = {};
  if (pread(g_statm, text, sizeof(text) - 1, 0) <= 0) return 0;
  unsigned long size = 0, resident = 0;
  int n = sscanf(text, "%lu %lu", &size, &resident);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

// closefrom(3), then the host's own file on every number from 3 (but statm's).
// /proc/self/statm is opened first and spared: heapgraph's threads may take freed low numbers.
void CloseAllAndReuse(const char* path) {
  g_statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (g_statm > 3) close_range(3, static_cast<unsigned>(g_statm) - 1, 0);
  close_range(static_cast<unsigned>(g_statm) + 1, ~0u, 0);
  int host = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  int last = limit.rlim_cur > 4096 ? 4095 : static_cast<int>(limit.rlim_cur) - 1;
  for (int n = 3; n <= last; ++n) {
    if (n != g_statm) dup2(host, n);
  }
}

}  // namespace

extern "C" __attribute__((noinline)) void MakeObjects() {
  for (auto& w : g_widgets) w = new Widget;
  for (auto& g : g_gadgets) g = new shapes::Gadget;
}

extern "C" __attribute__((noinline)) void* GrowBlock() {
  constexpr size_t kBlock = size_t{4} << 20;
  auto* p = static_cast<char*>(malloc(kBlock));
  memset(p, 1, kBlock);
  return p;
}

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc < 3) return 2;
  uint64_t limit = strtoull(argv[1], nullptr, 10) << 20;
  uint64_t target = limit * strtoull(argv[2], nullptr, 10) / 100;
  if (const char* host = getenv("HG_PRESSURE_HOST_FILE")) CloseAllAndReuse(host);
  if (g_statm < 0) g_statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  MakeObjects();
  printf("widgets %zu gadgets %zu\n", sizeof(g_widgets) / sizeof(g_widgets[0]),
         sizeof(g_gadgets) / sizeof(g_gadgets[0]));
  size_t n = 0;
  uint64_t rss;
  while ((rss = Rss()) < target && rss != 0 && n < 4096) {  // 0: cannot read it, stop
    g_blocks[n++] = GrowBlock();
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  printf("grown %ju blocks %zu\n", static_cast<uintmax_t>(Rss()), n);
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
