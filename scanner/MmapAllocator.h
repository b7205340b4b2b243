// scanner/: a standard allocator whose memory comes straight from anonymous mmap (ArrayMapping),
// never from the host's malloc: the scanning side runs while other threads of the process are
// stopped, possibly inside malloc with its locks held. Meant for a few large containers. In a
// process that activated a PagePool (the snapshot child), memory comes from and goes back to it.
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <new>
#include <vector>

#include "scanner/ArrayMapping.h"
#include "scanner/PagePool.h"

namespace heapgraph::scanner {

template <typename T>
class MmapAllocator {
 public:
  using value_type = T;

  MmapAllocator() = default;
  template <typename U>
  MmapAllocator(const MmapAllocator<U>&) {}

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (PagePool* pool = PagePool::active()) {
      void* p = pool->Take(n * sizeof(T));
      if (p == nullptr) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    void* p = ArrayMapping::Map(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (PagePool* pool = PagePool::active()) return pool->Give(p, n * sizeof(T));
    syscall(SYS_munmap, p, n * sizeof(T));
  }

  template <typename U>
  bool operator==(const MmapAllocator<U>&) const {
    return true;
  }
};

// The snapshot child's vector: its storage from MmapAllocator.
template <typename T>
using MmapVector = std::vector<T, MmapAllocator<T>>;

}  // namespace heapgraph::scanner
