// tests/programs: N threads x M mixed malloc/free/realloc operations (random sizes 1..4096, a
// working set of up to 1000 blocks per thread). At the end each thread frees every block except
// those in slots divisible by 8, and the program prints the exact count and bytes of what is left:
//   expected <count> <bytes>
//   range StressWorker <begin> <end>
// then "ready" and waits for stdin to close. Usage: hg_stress [threads] [operations] [cross].
// With "cross", each thread settles the next thread's blocks once all have done their operations,
// so that every free of the settling comes from a thread other than the one that allocated.
#include <pthread.h>
#include <stdlib.h>

#include <cstdint>

#include "ProgramSupport.h"

namespace {

constexpr unsigned kWorkingSet = 1000;
constexpr unsigned kKeepEvery = 8;

struct Slot {
  void* block;
  size_t size;
};

struct WorkerArgs {
  unsigned index;
  uint64_t operations;
  WorkerArgs* settle;       // whose blocks this thread settles: its own, or the next thread's
  pthread_barrier_t* done;  // non-null with "cross": every thread's operations are over
  uint64_t kept_count;
  uint64_t kept_bytes;
  Slot slots[kWorkingSet];
};

// Frees every slot not divisible by kKeepEvery; counts the rest.
__attribute__((noinline)) void Settle(WorkerArgs* args) {
  for (unsigned i = 0; i < kWorkingSet; ++i) {
    Slot& s = args->slots[i];
    if (s.block == nullptr) continue;
    if (i % kKeepEvery != 0) {
      free(s.block);
      s = {nullptr, 0};
      continue;
    }
    hgprog::Keep(s.block);
    ++args->kept_count;
    args->kept_bytes += s.size;
  }
}

}  // namespace

// Exported (the program links with -rdynamic) so that PrintRange finds its size. Every heap call
// is made directly from this function, so every block it leaves has a frame inside it.
extern "C" __attribute__((noinline)) void* StressWorker(void* raw) {
  auto* args = static_cast<WorkerArgs*>(raw);
  hgprog::Random random(args->index + 1);
  for (uint64_t op = 0; op < args->operations; ++op) {
    uint64_t r = random.Next();
    Slot& s = args->slots[r % kWorkingSet];
    size_t size = 1 + (r >> 20) % 4096;
    switch ((r >> 40) % 3) {
      case 0:
        free(s.block);
        s = {malloc(size), size};
        break;
      case 1:
        free(s.block);
        s = {nullptr, 0};
        break;
      default:
        s = {realloc(s.block, size), size};
        break;
    }
  }
  if (args->done != nullptr) pthread_barrier_wait(args->done);
  Settle(args->settle);
  return nullptr;
}

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  unsigned threads = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 8;
  uint64_t operations = argc > 2 ? strtoull(argv[2], nullptr, 10) : 1000000;
  const bool cross = argc > 3 && argv[3][0] == 'c';
  pthread_barrier_t done;
  pthread_barrier_init(&done, nullptr, threads);
  auto* args = static_cast<WorkerArgs*>(calloc(threads, sizeof(WorkerArgs)));
  auto* ids = static_cast<pthread_t*>(calloc(threads, sizeof(pthread_t)));
  for (unsigned t = 0; t < threads; ++t) {
    args[t].index = t;
    args[t].operations = operations;
    args[t].settle = cross ? &args[(t + 1) % threads] : &args[t];
    args[t].done = cross ? &done : nullptr;
    pthread_create(&ids[t], nullptr, StressWorker, &args[t]);
  }
  // Every thread first: with "cross", thread t's counts are written by thread t - 1.
  for (unsigned t = 0; t < threads; ++t) pthread_join(ids[t], nullptr);
  uint64_t count = 0, bytes = 0;
  for (unsigned t = 0; t < threads; ++t) {
    count += args[t].kept_count;
    bytes += args[t].kept_bytes;
  }
  printf("expected %ju %ju\n", static_cast<uintmax_t>(count), static_cast<uintmax_t>(bytes));
  hgprog::PrintRange("StressWorker", reinterpret_cast<const void*>(&StressWorker));
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
