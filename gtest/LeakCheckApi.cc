#include "gtest/LeakCheckApi.h"

#include <dlfcn.h>

namespace heapgraph::gtest {

LeakCheckApi::LeakCheckApi() {
  checkpoint_ =
      reinterpret_cast<decltype(checkpoint_)>(dlsym(RTLD_DEFAULT, "heapgraph_checkpoint"));
  if (checkpoint_ == nullptr) {
    error_ = "libheapgraph.so is not loaded (LD_PRELOAD it or link it)";
    return;
  }
  check_since_ =
      reinterpret_cast<decltype(check_since_)>(dlsym(RTLD_DEFAULT, "heapgraph_check_leaks_since"));
  if (check_since_ == nullptr) error_ = "libheapgraph.so has no heapgraph_check_leaks_since";
}

}  // namespace heapgraph::gtest
