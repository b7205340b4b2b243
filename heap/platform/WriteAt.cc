#include "heap/platform/WriteAt.h"

#include <errno.h>
#include <unistd.h>

namespace heapgraph {

bool WriteAt(int fd, const void* data, size_t length, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (length > 0) {
    ssize_t n = pwrite(fd, p, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace heapgraph
