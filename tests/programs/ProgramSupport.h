// tests/programs: helpers shared by the child programs that the recorder's process tests run.
// Protocol: a program prints "key value..." lines on stdout, then "ready <pid>", then (usually)
// blocks until its stdin is closed so that the test can read its recording while it is alive.
// Nothing here allocates after LineBufferedStdout(): stdout uses a static buffer, so a block freed
// by the program is never reused behind the test's back by stdio.
#pragma once

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hgprog {

inline constexpr size_t kSinkSlots = 1 << 16;
// Every pointer the program keeps is stored here: the compiler cannot drop an allocation whose
// result escapes to a volatile global.
inline void* volatile g_sink[kSinkSlots];
inline std::atomic<size_t> g_sink_next{0};

inline void Keep(void* p) {
  g_sink[g_sink_next.fetch_add(1) % kSinkSlots] = p;
}

// Zeroes 64 KiB of the dead stack below the caller's frame, where earlier calls (malloc, the
// recorder's hooks) left copies of block addresses that later frames' unwritten slots would keep.
__attribute__((noinline, unused)) static void ScrubStack() {
  char area[64 * 1024];
  explicit_bzero(area, sizeof(area));
  asm volatile("" : : "r"(area) : "memory");
}

// `count` blocks of `size` bytes (filled with 0x11, never a pointer) whose addresses are then
// forgotten: leaks. Out of line and extern "C": reports name it `LeakBlocks`. It scrubs the dead
// frames of what it called (malloc, memset, the recorder's hook); its own frame is dead once it
// returns, so a caller that then blocks while a check runs calls ScrubStack() too: the blocking
// call's frames would lie over it, and their unwritten slots would keep a copy.
inline void* volatile g_leak_sink;
extern "C" __attribute__((noinline, used)) inline void LeakBlocks(int count, size_t size) {
  for (int i = 0; i < count; ++i) {
    void* p = malloc(size);
    memset(p, 0x11, size);
    g_leak_sink = p;
  }
  g_leak_sink = nullptr;
  ScrubStack();
}

inline void LineBufferedStdout() {
  static char buffer[1 << 16];
  setvbuf(stdout, buffer, _IOLBF, sizeof(buffer));
}

inline void PrintAddress(const char* name, const void* address) {
  printf("%s %#jx\n", name, static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(address)));
}

// "range <name> <begin> <end>": the code of an exported function (the program is linked with
// -rdynamic, so dladdr1 finds its dynamic symbol and size).
inline void PrintRange(const char* name, const void* function) {
  Dl_info info;
  void* entry = nullptr;
  int found = dladdr1(function, &info, &entry, RTLD_DL_SYMENT);
  auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (found == 0 || symbol == nullptr || info.dli_saddr == nullptr) {
    printf("range %s 0 0\n", name);
    return;
  }
  auto begin = reinterpret_cast<uintptr_t>(info.dli_saddr);
  printf("range %s %#jx %#jx\n", name, static_cast<uintmax_t>(begin),
         static_cast<uintmax_t>(begin + symbol->st_size));
}

// Sleeps `seconds` whole, across signals (the lag monitor's sampling signal interrupts it).
inline void SleepFully(unsigned seconds) {
  struct timespec t = {static_cast<time_t>(seconds), 0};
  while (nanosleep(&t, &t) != 0) {
  }
}

// First applies the frees the recorder still holds in this thread's batch (heapgraph_sync, when
// heapgraph records this process; option batch_frees), so the test reads every free made so far.
inline void Ready() {
  using SyncFn = void (*)();
  if (auto sync = reinterpret_cast<SyncFn>(dlsym(RTLD_DEFAULT, "heapgraph_sync"))) sync();
  printf("ready %d\n", static_cast<int>(getpid()));
  fflush(stdout);
}

// Returns when the test closes our stdin (or it is already at EOF).
inline void WaitForStdinEof() {
  char c;
  for (;;) {
    ssize_t n = read(0, &c, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) return;
  }
}

// Waits for the child `pid` at most `timeout_ms`: its exit status, 128 + its signal, or -1 when
// it had not exited by then (it is then killed with SIGKILL and reaped).
inline int WaitForChild(pid_t pid, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(5000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

// A small deterministic generator (xorshift64*): no allocation, no locks.
struct Random {
  explicit Random(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
  uint64_t state;
};

// Allocates `size` bytes at the end of a call chain `depth` frames deep whose shape follows the
// bits of `path` (two functions alternate): every distinct (depth, path) is a stack the recorder
// has never seen, so each call interns new stack nodes.
__attribute__((noinline, unused)) static void* PathLeft(unsigned depth, uint64_t path, size_t size);
__attribute__((noinline, unused)) static void* PathRight(unsigned depth, uint64_t path,
                                                         size_t size);

__attribute__((noinline, unused)) static void* AllocateOnPath(unsigned depth, uint64_t path,
                                                              size_t size) {
  void* p = depth == 0        ? malloc(size)
            : (path & 1) != 0 ? PathLeft(depth - 1, path >> 1, size)
                              : PathRight(depth - 1, path >> 1, size);
  asm volatile("" : : "r"(p) : "memory");  // no tail call: the frame stays on the stack
  return p;
}

__attribute__((noinline, unused)) static void* PathLeft(unsigned depth, uint64_t path,
                                                        size_t size) {
  void* p = AllocateOnPath(depth, path, size);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

__attribute__((noinline, unused)) static void* PathRight(unsigned depth, uint64_t path,
                                                         size_t size) {
  void* p = AllocateOnPath(depth, path, size);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

}  // namespace hgprog
