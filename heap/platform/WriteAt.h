// heap/platform/: writes a whole buffer at a file offset (pwrite(2) until done), retrying short
// writes and EINTR. No malloc, no stdio: usable from hooks and from a forked snapshot process.
// Includes libc only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

// True once all `length` bytes are at [offset, offset + length) of `fd`; false on the first error
// or zero-byte write (errno tells which), with a prefix possibly written.
bool WriteAt(int fd, const void* data, size_t length, uint64_t offset);

}  // namespace heapgraph
