// tests/heap/runtime/LeakCheckTriggerTest's child: a program that does not link heapgraph and,
// under LD_PRELOAD=libheapgraph.so, finds the public check functions with dlsym(RTLD_DEFAULT) as
// docs/configuration.md says. Leaks 3 blocks, checks; sets a checkpoint, leaks 2 more, checks
// since it. Prints "checks <all> <since>", or "missing <symbol>" and exits 1.
#include <dlfcn.h>

#include <cstdio>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

namespace {

template <typename Function>
Function Find(const char* name) {
  void* symbol = dlsym(RTLD_DEFAULT, name);
  if (symbol == nullptr) std::printf("missing %s\n", name);
  return reinterpret_cast<Function>(symbol);
}

}  // namespace

int main() {
  hgprog::LineBufferedStdout();
  auto check = Find<decltype(&heapgraph_check_leaks)>("heapgraph_check_leaks");
  auto checkpoint = Find<decltype(&heapgraph_checkpoint)>("heapgraph_checkpoint");
  auto since = Find<decltype(&heapgraph_check_leaks_since)>("heapgraph_check_leaks_since");
  auto changed = Find<decltype(&heapgraph_check_leaks_changed)>("heapgraph_check_leaks_changed");
  auto explain = Find<decltype(&heapgraph_check_leaks_explain)>("heapgraph_check_leaks_explain");
  if (!check || !checkpoint || !since || !changed || !explain) return 1;
  hgprog::LeakBlocks(3, 100);
  hgprog::ScrubStack();
  int all = check(nullptr, nullptr, nullptr);
  checkpoint("dlsym");
  hgprog::LeakBlocks(2, 100);
  hgprog::ScrubStack();
  int in_window = since("dlsym", nullptr, nullptr, nullptr);
  std::printf("checks %d %d\n", all, in_window);
  return 0;
}
