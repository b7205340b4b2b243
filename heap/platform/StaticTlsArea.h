// heap/platform/: where a static-TLS (initial-exec) thread-local object lives in every thread.
// glibc places a module's static TLS block at the same offset from the thread pointer in every
// thread (x86-64: below %fs:0, TLS variant II; aarch64: above TPIDR_EL0, variant I), so one
// (offset, size) pair found in one thread locates the object in all of them, including threads that
// never touched it. The recorder publishes its per-thread state this way so that a leak scan can
// leave it out of the roots. Includes only <cstdint>; no allocation.
#pragma once

#include <cstdint>

namespace heapgraph {

class StaticTlsArea {
 public:
  StaticTlsArea() = default;
  StaticTlsArea(int64_t offset, uint64_t size) : offset_(offset), size_(size) {}

  // The calling thread's thread pointer (x86-64: %fs:0, glibc's struct pthread; aarch64:
  // TPIDR_EL0).
  static uint64_t ThreadPointer();
  // The area of `object` (`size` bytes, a static-TLS thread-local of the calling thread).
  static StaticTlsArea Of(const void* object, uint64_t size);

  int64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  // The area's first byte in the thread whose thread pointer is `thread_pointer`.
  uint64_t BeginIn(uint64_t thread_pointer) const {
    return thread_pointer + static_cast<uint64_t>(offset_);
  }

 private:
  int64_t offset_ = 0;  // from the thread pointer; negative on x86-64
  uint64_t size_ = 0;   // 0: no area
};

}  // namespace heapgraph
