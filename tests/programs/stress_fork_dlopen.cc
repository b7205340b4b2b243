// tests/programs: a fork+dlopen storm for tests/stress/run.sh (issue 12, items 1-2), run under
// libheapgraph.so (LD_PRELOAD).
//
//   stress_fork_dlopen LIBRARY N
//
// One thread dlopen()s and dlclose()s LIBRARY (a library that allocates in its constructor) in a
// loop; another calls dl_iterate_phdr() with a callback that allocates (LeakSanitizer's
// Linux/libdl_deadlock shape); the main thread forks N children one after the other, each of which
// allocates and frees through malloc, realloc, calloc and posix_memalign and _exit(0)s. Prints one
// line per fork: "try <i> ok", or "try <i> failed <why>" (the child did not exit 0, or had not
// exited after 10 s: it is then killed). A hang of this process itself shows as missing lines
// (tests/stress/run.sh counts them as failed). Exit 0 once every fork ran, 64 on a bad argument.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ProgramSupport.h"

namespace {

constexpr int kChildTimeoutMs = 10000;

const char* g_library = nullptr;
std::atomic<bool> g_stop{false};

void* LoadAndUnload(void*) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    void* handle = dlopen(g_library, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) dlclose(handle);
  }
  return nullptr;
}

int AllocatingCallback(dl_phdr_info*, size_t, void*) {
  void* volatile p = malloc(64);
  free(p);
  return 0;
}

void* IteratePhdr(void*) {
  while (!g_stop.load(std::memory_order_relaxed)) dl_iterate_phdr(AllocatingCallback, nullptr);
  return nullptr;
}

// The child allocates through every family the recorder hooks, then exits. It does not dlopen:
// glibc 2.36 itself hangs there when another thread held the loader's write lock at fork()
// (_dl_add_to_namespace_list; measured without heapgraph: 1 child of 2 hung).
[[noreturn]] void Child() {
  for (int i = 0; i < 100; ++i) {
    void* volatile p = malloc(1 + i * 37);
    p = realloc(p, 2 + i * 41);
    free(p);
    void* volatile q = calloc(3, 1 + i);
    free(q);
    void* aligned = nullptr;
    if (posix_memalign(&aligned, 64, 64 + i) == 0) free(aligned);
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  const int tries = argc == 3 ? std::atoi(argv[2]) : 0;
  if (tries <= 0) {
    std::fprintf(stderr, "usage: stress_fork_dlopen LIBRARY N\n");
    return 64;
  }
  g_library = argv[1];
  pthread_t loader, iterator;
  pthread_create(&loader, nullptr, LoadAndUnload, nullptr);
  pthread_create(&iterator, nullptr, IteratePhdr, nullptr);
  for (int i = 1; i <= tries; ++i) {
    const pid_t pid = fork();
    if (pid == 0) Child();
    const int status = pid > 0 ? hgprog::WaitForChild(pid, kChildTimeoutMs) : -2;
    if (status == 0) {
      std::printf("try %d ok\n", i);
    } else if (status == -1) {
      std::printf("try %d failed child hung (killed after 10 s)\n", i);
    } else if (status == -2) {
      std::printf("try %d failed fork: %s\n", i, std::strerror(errno));
    } else {
      std::printf("try %d failed child exit status %d\n", i, status);
    }
  }
  g_stop.store(true);
  pthread_join(loader, nullptr);
  pthread_join(iterator, nullptr);
  return 0;
}
