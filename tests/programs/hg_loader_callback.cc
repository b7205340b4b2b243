// tests/programs: allocation inside dl_iterate_phdr callbacks while other threads allocate too
// (issue 12, item 1; the shape of LeakSanitizer's Linux/libdl_deadlock test). Usage:
//   hg_loader_callback LIB ROUNDS
// The main thread, ROUNDS times: dlopen LIB (a module the recorder has not seen at that address),
// dl_iterate_phdr with a callback that, for every loaded object, allocates through LIB's
// HgDlAllocate and through call paths never used before, then dlclose LIB. Two threads allocate
// through never-used call paths all along, so the recorder meets new stacks on every thread while
// the callback holds the loader's lock. In the last round the callback keeps one block ("kept
// <address>"), whose stack must pass through HgOnObject and, beyond glibc's dl_iterate_phdr,
// HgLoaderRounds ("range <name> <begin> <end>"). Prints "rounds <n>" and exits 0 when every round
// is done; a deadlock shows as a child that never exits (the test's timeout).
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <cstdint>

#include "ProgramSupport.h"

namespace {

using BlockFn = void* (*)();

constexpr unsigned kThreads = 2;

std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_next_path{1};

// A call path no thread has used yet: 10 to 21 frames, shape from a process-wide counter.
void* AllocateFresh(size_t size) {
  uint64_t path = g_next_path.fetch_add(1);
  return hgprog::AllocateOnPath(10 + static_cast<unsigned>(path % 12), path, size);
}

void* AllocateAlongside(void*) {
  while (!g_stop.load(std::memory_order_relaxed)) free(AllocateFresh(48));
  return nullptr;
}

struct Round {
  BlockFn allocate;
  bool keep_one;
};

}  // namespace

extern "C" __attribute__((noinline)) int HgOnObject(dl_phdr_info*, size_t, void* data) {
  auto* round = static_cast<Round*>(data);
  for (int i = 0; i < 4; ++i) {
    free(round->allocate());
    free(AllocateFresh(64 + i));
  }
  if (round->keep_one) {
    round->keep_one = false;
    void* kept = malloc(4321);
    hgprog::Keep(kept);
    hgprog::PrintAddress("kept", kept);
  }
  return 0;
}

extern "C" __attribute__((noinline)) int HgLoaderRounds(const char* library, unsigned rounds) {
  pthread_t threads[kThreads];
  for (pthread_t& t : threads) pthread_create(&t, nullptr, AllocateAlongside, nullptr);
  unsigned done = 0;
  for (; done < rounds; ++done) {
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      printf("load_error %s\n", dlerror());
      break;
    }
    Round round{reinterpret_cast<BlockFn>(dlsym(handle, "HgDlAllocate")), done + 1 == rounds};
    if (round.allocate == nullptr) break;
    dl_iterate_phdr(HgOnObject, &round);
    dlclose(handle);
  }
  g_stop.store(true);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  hgprog::PrintRange("HgOnObject", reinterpret_cast<const void*>(&HgOnObject));
  hgprog::PrintRange("HgLoaderRounds", reinterpret_cast<const void*>(&HgLoaderRounds));
  printf("rounds %u\n", done);
  return done == rounds ? 0 : 1;
}

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc == 3) {
    return HgLoaderRounds(argv[1], static_cast<unsigned>(strtoul(argv[2], nullptr, 10)));
  }
  fprintf(stderr, "usage: hg_loader_callback LIB ROUNDS\n");
  return 2;
}
