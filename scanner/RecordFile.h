// scanner/: the raw arrays of the snapshot child's side results (TypedScan, ExplainScan) in a
// memfd: AppendWriter appends them from a running offset with whole positioned writes
// (heap/platform/WriteAt; no allocation, the child's side); ReadArray reads one back, its length
// bounded (the checking process's side). Both processes run the same build: the layout is the
// compiler's. May include heap/.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "heap/platform/WriteAt.h"

namespace heapgraph::scanner {

class AppendWriter {
 public:
  explicit AppendWriter(int fd) : fd_(fd) {}
  // Writes `count` elements at the offset and moves past them; false if the write failed.
  template <typename T>
  bool Put(const T* data, size_t count) {
    size_t length = count * sizeof(T);
    if (!WriteAt(fd_, data, length, static_cast<uint64_t>(offset_))) return false;
    offset_ += static_cast<off_t>(length);
    return true;
  }
  off_t offset() const { return offset_; }
  void Seek(off_t offset) { offset_ = offset; }

 private:
  int fd_;
  off_t offset_ = 0;
};

// Reads `count` elements at *offset into *out and moves *offset past them; false on a short read
// or a count above 2^40 bytes.
template <typename T>
bool ReadArray(int fd, off_t* offset, uint64_t count, std::vector<T>* out) {
  if (count > (uint64_t{1} << 40) / sizeof(T)) return false;
  out->resize(count);
  size_t length = count * sizeof(T);
  if (length == 0) return true;
  if (pread(fd, out->data(), length, *offset) != static_cast<ssize_t>(length)) return false;
  *offset += static_cast<off_t>(length);
  return true;
}

}  // namespace heapgraph::scanner
