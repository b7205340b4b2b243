// tests/heap/runtime/LeakCheckTriggerTest's child for process trees under `heapgraph run`:
// `leak_tree DEPTH STATUS` leaks one block of 100 + DEPTH bytes, then (DEPTH > 0) starts itself
// as `leak_tree DEPTH-1 0` with fork + exec and waits for it, then exits with STATUS. So a run of
// `leak_tree 2 S` is three recorded processes, each with one leak, the top one ending with S.
// `leak_tree DEPTH STATUS fork`: the children are forked without exec; each leaks one more block
// (300 bytes) and exits with 0 through exit(), so it runs its own at-exit check.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ProgramSupport.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: leak_tree DEPTH STATUS [fork]\n");
    return 2;
  }
  const bool fork_only = argc == 4;
  int depth = std::atoi(argv[1]);
  hgprog::LeakBlocks(1, 100 + static_cast<size_t>(depth));
  hgprog::ScrubStack();
  if (depth > 0) {
    std::string next = std::to_string(depth - 1);
    pid_t pid = fork();
    if (pid == 0 && fork_only) {
      hgprog::LeakBlocks(1, 300);
      hgprog::ScrubStack();
      std::exit(0);
    }
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], next.c_str(), "0", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  return std::atoi(argv[2]);
}
