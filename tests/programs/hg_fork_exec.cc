// tests/programs: fork, then exec at once in the child (no allocation in between).
// Usage: hg_fork_exec PROGRAM. Allocates a block, forks; the child execs PROGRAM (with the
// inherited environment, so the recorder is preloaded into it again); the parent waits and prints
// "child <pid> <wait status>", then exits 0.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ProgramSupport.h"

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc != 2) return 2;
  hgprog::Keep(malloc(4321));
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[1], &argv[1]);
    _exit(127);
  }
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  printf("child %d %d\n", static_cast<int>(pid), status);
  return 0;
}
