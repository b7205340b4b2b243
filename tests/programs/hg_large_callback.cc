// tests/programs: links libheapgraph directly (no LD_PRELOAD) and registers a large-allocation
// callback, then allocates 2 MiB and 512 KiB. Prints "callbacks <n>", "callback_size <bytes>",
// "callback_depth <frames>" and "callback_address_matches <0|1>", then exits 0.
#include <stdlib.h>

#include <atomic>
#include <cstdint>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

std::atomic<int> g_calls{0};
std::atomic<size_t> g_size{0};
std::atomic<size_t> g_depth{0};
std::atomic<void*> g_address{nullptr};

void OnLargeAllocation(void* address, size_t size, const uintptr_t* frames, size_t depth,
                       void* user_data) {
  g_calls.fetch_add(1);
  g_size.store(size);
  g_depth.store(frames != nullptr ? depth : 0);
  g_address.store(address);
  static_cast<std::atomic<int>*>(user_data)->fetch_add(1);
}

}  // namespace

int main() {
  hgprog::LineBufferedStdout();
  static std::atomic<int> user_data_calls{0};
  heapgraph_set_large_alloc_callback(OnLargeAllocation, &user_data_calls);
  void* large = malloc(2 << 20);
  hgprog::Keep(large);
  void* small = malloc(512 << 10);
  hgprog::Keep(small);
  printf("callbacks %d\n", g_calls.load());
  printf("user_data_calls %d\n", user_data_calls.load());
  printf("callback_size %zu\n", g_size.load());
  printf("callback_depth %zu\n", g_depth.load());
  printf("callback_address_matches %d\n", g_address.load() == large ? 1 : 0);
  fflush(stdout);
  return 0;
}
