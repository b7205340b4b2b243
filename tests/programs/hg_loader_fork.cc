// tests/programs: fork while another thread keeps the loader busy (issue 12, item 2). Usage:
//   hg_loader_fork LIB FORKS DEADLINE_SECONDS
// One thread loops dlopen LIB / dl_iterate_phdr / dlclose LIB, so it often holds glibc's
// _dl_load_write_lock at the moment the main thread forks. The main thread forks FORKS children
// one after the other; each child allocates through a function the parent never ran and a call
// path never used before (its first hooks meet unknown stacks), then calls _exit(0) (exit() can
// hang without heapgraph: glibc's fork does not reset __exit_funcs_lock, which dlclose takes). A
// child that has not exited DEADLINE_SECONDS after its fork is killed and reported as "hung <pid>",
// and no more children are forked. Prints "forks <n> hung <h>"; exits 0 when every child exited 0.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "ProgramSupport.h"

namespace {

std::atomic<bool> g_stop{false};
const char* g_library = nullptr;

int CountObject(dl_phdr_info*, size_t, void* data) {
  ++*static_cast<unsigned*>(data);
  return 0;
}

void* KeepLoaderBusy(void*) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    void* handle = dlopen(g_library, RTLD_NOW | RTLD_LOCAL);
    unsigned objects = 0;
    dl_iterate_phdr(CountObject, &objects);
    if (handle != nullptr) dlclose(handle);
  }
  return nullptr;
}

// Runs only in children: its return addresses are new to the unwinder in every child.
__attribute__((noinline)) void* ChildAllocate(uint64_t path) {
  void* p = hgprog::AllocateOnPath(8 + static_cast<unsigned>(path % 8), path, 100 + path % 50);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

double Now() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The child's wait status, or -1 after killing it at the deadline.
int Reap(pid_t pid, double deadline) {
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    if (Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(500);
  }
}

int Run(unsigned forks, double deadline_seconds) {
  pthread_t busy;
  pthread_create(&busy, nullptr, KeepLoaderBusy, nullptr);
  unsigned done = 0, hung = 0, failed = 0;
  for (uint64_t i = 0; i < forks && hung == 0; ++i) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      void* p = ChildAllocate(i * 7919 + 1);
      free(p);
      _exit(0);  // not exit(): glibc's fork leaves __exit_funcs_lock held if dlclose held it
    }
    if (pid < 0) break;
    int status = Reap(pid, Now() + deadline_seconds);
    ++done;
    if (status == -1) {
      printf("hung %d\n", static_cast<int>(pid));
      ++hung;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      printf("failed %d %d\n", static_cast<int>(pid), status);
      ++failed;
    }
  }
  g_stop.store(true);
  pthread_join(busy, nullptr);
  printf("forks %u hung %u\n", done, hung);
  return done == forks && hung == 0 && failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc == 4) {
    g_library = argv[1];
    return Run(static_cast<unsigned>(strtoul(argv[2], nullptr, 10)), strtod(argv[3], nullptr));
  }
  fprintf(stderr, "usage: hg_loader_fork LIB FORKS DEADLINE_SECONDS\n");
  return 2;
}
