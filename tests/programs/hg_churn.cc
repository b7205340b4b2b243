// tests/programs: churns the heap from N threads (default 4) forever: malloc/free/realloc with
// random sizes over a working set of 1000 blocks per thread, and anonymous mmap/munmap every 64th
// operation. Prints "ready" once every thread has started; the test kills it with SIGKILL.
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>

#include "ProgramSupport.h"

namespace {

constexpr unsigned kSlots = 1000;
constexpr unsigned kMaxThreads = 64;

std::atomic<unsigned> g_started{0};

__attribute__((noinline)) void ChurnMapping(void** mapping, uint64_t r) {
  if (*mapping != nullptr) munmap(*mapping, 4 * 4096);
  void* p = mmap(nullptr, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *mapping = p == MAP_FAILED ? nullptr : p;
  if (*mapping != nullptr && r % 2 == 0) munmap(static_cast<char*>(*mapping) + 4096, 4096);
}

void* ChurnForever(void* raw) {
  static thread_local void* slots[kSlots];
  void* mapping = nullptr;
  hgprog::Random random(reinterpret_cast<uintptr_t>(raw));
  g_started.fetch_add(1);
  for (uint64_t op = 0;; ++op) {
    uint64_t r = random.Next();
    void*& slot = slots[r % kSlots];
    size_t size = 1 + (r >> 20) % 8192;
    if (op % 64 == 0) ChurnMapping(&mapping, r >> 50);
    switch ((r >> 40) % 3) {
      case 0:
        free(slot);
        slot = malloc(size);
        break;
      case 1:
        free(slot);
        slot = nullptr;
        break;
      default:
        slot = realloc(slot, size);
        break;
    }
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  unsigned threads = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 4;
  if (threads > kMaxThreads) threads = kMaxThreads;
  pthread_t ids[kMaxThreads];
  for (uintptr_t t = 0; t < threads; ++t) {
    pthread_create(&ids[t], nullptr, ChurnForever, reinterpret_cast<void*>(t + 1));
  }
  while (g_started.load() < threads) sched_yield();
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  _exit(0);
}
