// tests/programs: pieces shared by the programs that run a leak scan in themselves
// (scanner::RunLeakScan) beside real, parked threads and tell what it found by block size
// (sparse_roots, unreadable_pages): planted leaks, blocks kept by a single reference, the parked
// threads (LeakBlocks is ProgramSupport.h's). PlantKept is out-of-line (noinline, extern "C"):
// its frame, where the address passes, is dead once it returns. Header-only; one translation unit
// per program.
#pragma once

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cstddef>
#include <span>

#include "ProgramSupport.h"
#include "scanner/ScanResult.h"

namespace hgprog {

// The only reference to a new block of `size` bytes goes to `at` (unaligned is fine).
extern "C" __attribute__((noinline, used)) inline void PlantKept(char* at, size_t size) {
  void* p = malloc(size);
  memset(p, 0x55, size);
  memcpy(at, &p, sizeof(p));
}

// The reported leaks of `size` bytes.
inline size_t CountSize(const heapgraph::scanner::ScanResult& r, size_t size) {
  size_t n = 0;
  for (const auto& b : r.leaked) n += b.size == size ? 1 : 0;
  return n;
}

// Threads parked on a condition variable while the scan runs (their stacks and registers are
// roots). A thread calls Park(); the main thread AwaitParked(n) before scanning, then
// ReleaseAndJoin() the threads.
namespace ParkedThreads {

struct State {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  int parked = 0;
  bool released = false;
};
inline State g_state;

// Blocks the calling thread until ReleaseAndJoin.
inline void Park() {
  pthread_mutex_lock(&g_state.lock);
  ++g_state.parked;
  pthread_cond_broadcast(&g_state.cond);
  while (!g_state.released) pthread_cond_wait(&g_state.cond, &g_state.lock);
  pthread_mutex_unlock(&g_state.lock);
}

// A thread body that only parks.
inline void* Idle(void*) {
  Park();
  return nullptr;
}

// Returns once `count` threads are parked.
inline void AwaitParked(int count) {
  pthread_mutex_lock(&g_state.lock);
  while (g_state.parked < count) pthread_cond_wait(&g_state.cond, &g_state.lock);
  pthread_mutex_unlock(&g_state.lock);
}

inline void ReleaseAndJoin(std::span<const pthread_t> threads) {
  pthread_mutex_lock(&g_state.lock);
  g_state.released = true;
  pthread_cond_broadcast(&g_state.cond);
  pthread_mutex_unlock(&g_state.lock);
  for (pthread_t t : threads) pthread_join(t, nullptr);
}

}  // namespace ParkedThreads

}  // namespace hgprog
