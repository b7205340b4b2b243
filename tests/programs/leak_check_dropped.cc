// Child program of tests/check/LeakCheckDroppedPrivilegesTest: starts as root (the recorder
// makes its 0700 directory as root), leaks 5 blocks of 200 bytes, drops to uid/gid 65534
// (nobody) as a service does, then checks: the API check (JSON report into argv[1], a directory
// nobody may write), printing "check <leaked> <error>", then a signal check, whose report goes to
// stderr; it waits until stderr has stopped growing (at most 60 s) and exits 0. Exit status 3
// when not started as root.
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

long StderrSize() {
  struct stat st;
  return fstat(2, &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

// Returns once stderr grew and then stayed the same for a second.
void AwaitSignalReport() {
  long before = StderrSize(), last = before;
  for (int quiet = 0, i = 0; i < 600 && !(last != before && quiet >= 10); ++i) {
    usleep(100 * 1000);
    long now = StderrSize();
    quiet = now == last ? quiet + 1 : 0;
    last = now;
  }
}

}  // namespace

int main(int argc, char** argv) {
  static char buffer[1 << 16];
  setvbuf(stdout, buffer, _IOLBF, sizeof(buffer));
  if (getuid() != 0) return 3;
  if (argc < 2) return 2;
  hgprog::LeakBlocks(5, 200);
  if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
      setresuid(65534, 65534, 65534) != 0) {
    std::perror("dropping privileges");
    return 2;
  }
  char json[1024];
  std::snprintf(json, sizeof(json), "%s/report.json", argv[1]);
  heapgraph_leak_summary summary;
  int leaked = heapgraph_check_leaks(json, nullptr, &summary);
  std::printf("check %d %s\n", leaked, summary.error);
  std::fflush(stdout);
  kill(getpid(), SIGRTMIN + 5);
  AwaitSignalReport();
  return 0;
}
