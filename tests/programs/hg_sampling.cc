// tests/programs: a known allocation mix for the sampling tests (RecorderSamplingTest).
//   hg_sampling SMALL LARGE CHURN [fork]
// keeps SMALL blocks of 64 B (KeepSmall) and LARGE blocks of 1 MiB (KeepLarge), then mallocs and
// frees CHURN more 64-byte blocks (Churn: most of them unsampled, so their frees miss the tree).
// With "fork" the same mix is allocated by a forked child instead (the parent keeps nothing of
// it), which prints "child <pid>" and exits 0; the parent waits for it. Prints "ready <pid>" and
// exits 0 without freeing the kept blocks, so they stay live in the recording. Also prints
// "range Churn <begin> <end>".
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "ProgramSupport.h"

namespace {

constexpr size_t kMaxSmall = size_t{1} << 21;
void* g_small[kMaxSmall];  // static: keeping the pointers allocates nothing
void* g_large[4096];

}  // namespace

extern "C" __attribute__((noinline)) void KeepSmall(size_t count) {
  for (size_t i = 0; i < count && i < kMaxSmall; ++i) {
    g_small[i] = malloc(64);
    static_cast<char*>(g_small[i])[0] = 1;
  }
}

extern "C" __attribute__((noinline)) void KeepLarge(size_t count) {
  for (size_t i = 0; i < count && i < 4096; ++i) {
    g_large[i] = malloc(size_t{1} << 20);
    static_cast<char*>(g_large[i])[0] = 1;
  }
}

extern "C" __attribute__((noinline)) void Churn(size_t count) {
  for (size_t i = 0; i < count; ++i) {
    void* p = malloc(64);
    static_cast<char*>(p)[0] = 1;
    free(p);
  }
}

static void Mix(size_t small, size_t large, size_t churn) {
  KeepSmall(small);
  KeepLarge(large);
  Churn(churn);
}

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc < 4) return 2;
  size_t small = strtoull(argv[1], nullptr, 10);
  size_t large = strtoull(argv[2], nullptr, 10);
  size_t churn = strtoull(argv[3], nullptr, 10);
  if (argc > 4 && strcmp(argv[4], "fork") == 0) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      Mix(small, large, churn);
      printf("child %d\n", static_cast<int>(getpid()));
      fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
  } else {
    Mix(small, large, churn);
  }
  hgprog::PrintRange("Churn", reinterpret_cast<void*>(&Churn));
  hgprog::Ready();
  return 0;
}
