#include "roots/ScratchPages.h"

#include <sys/mman.h>
#include <unistd.h>

namespace heapgraph::roots {

ScratchPages::~ScratchPages() {
  if (base_ != nullptr) munmap(base_, size_);
}

bool ScratchPages::Reserve(size_t bytes) {
  if (base_ != nullptr && bytes <= size_) return true;
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = (bytes + page - 1) / page * page;
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return false;
  if (base_ != nullptr) munmap(base_, size_);
  base_ = static_cast<uint8_t*>(base);
  size_ = size;
  return true;
}

void ScratchPages::Zero() {
  if (base_ != nullptr) madvise(base_, size_, MADV_DONTNEED);
}

std::pair<uint64_t, uint64_t> ScratchPages::range() const {
  const auto begin = reinterpret_cast<uint64_t>(base_);
  return {begin, begin + size_};
}

}  // namespace heapgraph::roots
