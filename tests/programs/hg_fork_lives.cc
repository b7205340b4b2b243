// tests/programs: forked children that live, or exec after a few allocations (ForkSnapshot).
// Usage: hg_fork_lives MODE [ARGS]. The parent allocates a known block ("known <address> <size>")
// and forks once, prints "child <pid>", waits for the child and prints "reaped <wait status>".
//   exec N PROGRAM: the child makes N malloc/free pairs (as a shell does), then execs PROGRAM.
//   live: the child allocates a block ("early <address> <size>"), sleeps 50 ms, allocates
//     another ("late <address> <size>"), prints "ready <parent pid>" and sleeps until killed.
//   thread: the child starts a thread at once that allocates a block ("threaded <address>
//     <size>"), joins it, prints "ready <parent pid>" and sleeps until killed.
//   grandchild: the child forks again at once; the grandchild does what `live` does (its pid in
//     "grandchild <pid>"), the child waits for it.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "ProgramSupport.h"

namespace {

void* Allocate(const char* what, size_t size) {
  void* p = malloc(size);
  hgprog::Keep(p);
  printf("%s %#jx %zu\n", what, static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(p)), size);
  return p;
}

void SleepMs(long ms) {
  timespec delay = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&delay, nullptr);
}

[[noreturn]] void ReadyUntilKilled(pid_t parent) {
  printf("ready %d\n", static_cast<int>(parent));
  for (;;) pause();
}

[[noreturn]] void Live(pid_t parent) {
  Allocate("early", 5501);
  SleepMs(50);
  Allocate("late", 5502);
  ReadyUntilKilled(parent);
}

void* Threaded(void*) {
  return Allocate("threaded", 5503);
}

[[noreturn]] void Child(int argc, char** argv, pid_t parent) {
  if (strcmp(argv[1], "exec") == 0 && argc == 4) {
    for (int i = 0; i < atoi(argv[2]); ++i) {
      void* p = malloc(static_cast<size_t>(16 + i));
      hgprog::Keep(p);
      free(p);
    }
    execv(argv[3], &argv[3]);
    _exit(127);
  }
  if (strcmp(argv[1], "live") == 0) Live(parent);
  if (strcmp(argv[1], "thread") == 0) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, Threaded, nullptr) != 0) _exit(4);
    pthread_join(thread, nullptr);
    ReadyUntilKilled(parent);
  }
  if (strcmp(argv[1], "grandchild") == 0) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) Live(parent);
    printf("grandchild %d\n", static_cast<int>(pid));
    int status = 0;
    waitpid(pid, &status, 0);
    _exit(0);
  }
  _exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc < 2) return 2;
  Allocate("known", 4321);
  fflush(stdout);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) Child(argc, argv, parent);
  printf("child %d\n", static_cast<int>(pid));
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  printf("reaped %d\n", status);
  return 0;
}
