#include "heap/platform/SmallFile.h"

#include <sys/stat.h>
#include <unistd.h>

namespace heapgraph {

ssize_t SmallFile::Read(int dir_fd, const char* path, char* buffer, size_t size) {
  if (size == 0) return -1;
  buffer[0] = '\0';
  int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  // procfs hands a file out in pieces of at most a page per read: read to the end.
  size_t total = 0;
  ssize_t n = 0;
  while (total + 1 < size && (n = read(fd, buffer + total, size - 1 - total)) > 0) {
    total += static_cast<size_t>(n);
  }
  close(fd);
  buffer[total] = '\0';
  return n < 0 && total == 0 ? -1 : static_cast<ssize_t>(total);
}

}  // namespace heapgraph
