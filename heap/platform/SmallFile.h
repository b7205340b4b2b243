// heap/platform/: reads a small file of the kernel's (/proc, /sys, cgroupfs) whole into a caller's
// buffer, without allocating: usable in hooks and on tool threads. The file is opened read-only,
// close-on-exec and non-blocking, and refused unless it is a regular file (those of procfs, sysfs
// and cgroupfs are), since a path may come from a corrupt session file. Invariant: the buffer is
// always NUL-terminated (when it has room for anything at all). Includes libc only.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstddef>

namespace heapgraph {

namespace SmallFile {

// Reads at most size-1 bytes of `path` (relative to `dir_fd`, or AT_FDCWD) into `buffer` and
// NUL-terminates them. The number of bytes read, or -1 (and "" in `buffer`) when the file
// cannot be opened, is not a regular file or cannot be read.
ssize_t Read(int dir_fd, const char* path, char* buffer, size_t size);
inline ssize_t Read(const char* path, char* buffer, size_t size) {
  return Read(AT_FDCWD, path, buffer, size);
}

}  // namespace SmallFile

}  // namespace heapgraph
