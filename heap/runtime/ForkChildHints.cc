#include "heap/runtime/ForkChildHints.h"

#include <sys/mman.h>

namespace heapgraph {

bool ForkChildHints::Initialize() {
  if (page_ != nullptr) return true;
  // Shared, so that a forked child's reports reach its parent; zero-filled: no place claimed.
  void* page =
      mmap(nullptr, sizeof(Page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return false;
  page_ = static_cast<Page*>(page);
  return true;
}

}  // namespace heapgraph
