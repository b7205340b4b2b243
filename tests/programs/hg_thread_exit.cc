// tests/programs: threads exiting while others allocate. Two churn threads malloc/free/realloc
// until told to stop; meanwhile the main thread spawns and joins short-lived threads (in waves of
// 8) that each allocate ten blocks, free nine and exit. Prints
//   expected ShortLived <count> <bytes>
//   expected Churn <count> <bytes>
//   range ShortLived <begin> <end>
//   range Churn <begin> <end>
// then "ready" and waits for stdin to close. Usage: hg_thread_exit [short-lived threads].
#include <pthread.h>
#include <stdlib.h>

#include <atomic>
#include <cstdint>

#include "ProgramSupport.h"

namespace {

constexpr unsigned kChurnThreads = 2;
constexpr unsigned kChurnSlots = 256;
constexpr unsigned kWave = 8;

std::atomic<bool> g_stop{false};

struct ChurnState {
  unsigned index;
  uint64_t kept_count;
  uint64_t kept_bytes;
  void* blocks[kChurnSlots];
  size_t sizes[kChurnSlots];
};

size_t ShortLivedKeptSize(uintptr_t index) {
  return 100 + index % 50;
}

__attribute__((noinline)) void SettleChurn(ChurnState* state) {
  for (unsigned i = 0; i < kChurnSlots; ++i) {
    if (state->blocks[i] == nullptr) continue;
    if (i % 4 != 0) {
      free(state->blocks[i]);
      continue;
    }
    hgprog::Keep(state->blocks[i]);
    ++state->kept_count;
    state->kept_bytes += state->sizes[i];
  }
}

}  // namespace

// Allocates ten blocks, keeps one of ShortLivedKeptSize(index) bytes, frees the rest, exits.
extern "C" __attribute__((noinline)) void* ShortLived(void* raw) {
  auto index = reinterpret_cast<uintptr_t>(raw);
  void* blocks[10];
  for (unsigned i = 0; i < 10; ++i) blocks[i] = malloc(i == 0 ? ShortLivedKeptSize(index) : 32 * i);
  blocks[3] = realloc(blocks[3], 4000);
  hgprog::Keep(blocks[0]);
  for (unsigned i = 1; i < 10; ++i) free(blocks[i]);
  return nullptr;
}

extern "C" __attribute__((noinline)) void* Churn(void* raw) {
  auto* state = static_cast<ChurnState*>(raw);
  hgprog::Random random(state->index + 100);
  while (!g_stop.load(std::memory_order_relaxed)) {
    uint64_t r = random.Next();
    unsigned slot = r % kChurnSlots;
    size_t size = 1 + (r >> 16) % 2048;
    if ((r >> 40) % 2 == 0) {
      free(state->blocks[slot]);
      state->blocks[slot] = malloc(size);
    } else {
      state->blocks[slot] = realloc(state->blocks[slot], size);
    }
    state->sizes[slot] = size;
  }
  SettleChurn(state);
  return nullptr;
}

namespace {

void RunShortLived(unsigned count, uint64_t* kept_count, uint64_t* kept_bytes) {
  for (unsigned first = 0; first < count; first += kWave) {
    pthread_t ids[kWave];
    unsigned n = count - first < kWave ? count - first : kWave;
    for (unsigned i = 0; i < n; ++i) {
      uintptr_t index = first + i;
      pthread_create(&ids[i], nullptr, ShortLived, reinterpret_cast<void*>(index));
      ++*kept_count;
      *kept_bytes += ShortLivedKeptSize(index);
    }
    for (unsigned i = 0; i < n; ++i) pthread_join(ids[i], nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  unsigned short_lived = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 2000;
  static ChurnState churn[kChurnThreads];
  pthread_t churn_ids[kChurnThreads];
  for (unsigned i = 0; i < kChurnThreads; ++i) {
    churn[i].index = i;
    pthread_create(&churn_ids[i], nullptr, Churn, &churn[i]);
  }
  uint64_t count = 0, bytes = 0;
  RunShortLived(short_lived, &count, &bytes);
  g_stop.store(true);
  uint64_t churn_count = 0, churn_bytes = 0;
  for (unsigned i = 0; i < kChurnThreads; ++i) {
    pthread_join(churn_ids[i], nullptr);
    churn_count += churn[i].kept_count;
    churn_bytes += churn[i].kept_bytes;
  }
  printf("expected ShortLived %ju %ju\n", static_cast<uintmax_t>(count),
         static_cast<uintmax_t>(bytes));
  printf("expected Churn %ju %ju\n", static_cast<uintmax_t>(churn_count),
         static_cast<uintmax_t>(churn_bytes));
  hgprog::PrintRange("ShortLived", reinterpret_cast<const void*>(&ShortLived));
  hgprog::PrintRange("Churn", reinterpret_cast<const void*>(&Churn));
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
