// tests/programs: large allocations from several threads at once. Usage: hg_large_threads
// [threads] [rounds]. In every round all threads pass a barrier and allocate (then free) 2 MiB
// together, so the large-allocation records are written concurrently. Prints
// "expected_records <threads * rounds>" and exits 0.
#include <pthread.h>
#include <stdlib.h>

#include "ProgramSupport.h"

namespace {

pthread_barrier_t g_barrier;
int g_rounds = 25;

void* AllocateLargeTogether(void*) {
  for (int round = 0; round < g_rounds; ++round) {
    pthread_barrier_wait(&g_barrier);
    void* p = malloc(2 << 20);
    hgprog::Keep(p);
    free(p);
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  int threads = argc > 1 ? atoi(argv[1]) : 8;
  if (argc > 2) g_rounds = atoi(argv[2]);
  if (threads < 1 || threads > 64) return 2;
  pthread_barrier_init(&g_barrier, nullptr, static_cast<unsigned>(threads));
  pthread_t ids[64];
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], nullptr, AllocateLargeTogether, nullptr);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], nullptr);
  printf("expected_records %d\n", threads * g_rounds);
  return 0;
}
