// scanner/: a standard allocator whose memory comes straight from anonymous mmap (raw syscalls),
// never from the host's malloc: the scanning side runs while other threads of the process are
// stopped, possibly inside malloc with its locks held. Meant for a few large containers.
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <new>

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
    long r = syscall(SYS_mmap, nullptr, n * sizeof(T), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r < 0 && r > -4096) throw std::bad_alloc();
    return reinterpret_cast<T*>(r);
  }
  void deallocate(T* p, size_t n) { syscall(SYS_munmap, p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const MmapAllocator<U>&) const {
    return true;
  }
};

}  // namespace heapgraph::scanner
