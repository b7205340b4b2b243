// Child program of tests/check/LeakCheckDroppedPrivilegesTest: starts as root (the recorder
// makes its 0700 directory as root), leaks 5 blocks of 200 bytes, drops to uid/gid 65534
// (nobody) as a service does, then checks: the API check (JSON report into argv[1], a directory
// nobody may write), printing "check <leaked> <error>", then a signal check, whose report goes to
// stderr, which the test sends to argv[1]/stderr; it waits until that file holds the report's
// last line (at most 60 s) and exits 0. Exit status 3
// when not started as root.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

// Whether the file `path` (where the test sent stderr) holds the text report's last line. By path:
// after setresuid the process is not dumpable, and /proc/self/fd is closed to it.
bool HasScanLine(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  static char text[1 << 16];
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  text[n > 0 ? n : 0] = '\0';
  return strstr(text, "\nScan: ") != nullptr;
}

// Returns once the signal check wrote its text report to stderr (at most 60 s): polling for its
// last line, not for quiet, since on a loaded machine the check's lines can be seconds apart.
void AwaitSignalReport(const char* stderr_path) {
  for (int i = 0; i < 600 && !HasScanLine(stderr_path); ++i) usleep(100 * 1000);
}

}  // namespace

int main(int argc, char** argv) {
  static char buffer[1 << 16];
  setvbuf(stdout, buffer, _IOLBF, sizeof(buffer));
  if (getuid() != 0) return 3;
  if (argc < 2) return 2;
  hgprog::LeakBlocks(5, 200);
  hgprog::ScrubStack();  // the signal check runs while main sleeps over those frames
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
  char stderr_path[1024];
  std::snprintf(stderr_path, sizeof(stderr_path), "%s/stderr", argv[1]);
  AwaitSignalReport(stderr_path);
  return 0;
}
