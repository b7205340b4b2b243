// heap/session/: the GNU build-id of an ELF file on disk, read with pread into stack buffers (libc
// only, no allocation): how the next start (and `heapgraph foom`) tells that the executable of a
// previous run was replaced (upgraded) since.
#pragma once

#include <cstdint>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

namespace ExecutableBuildId {

// Fills `id` (up to format::kMaxBuildId bytes) and `length`; false when the file is unreadable,
// not a 64-bit little-endian ELF file, or has no NT_GNU_BUILD_ID note in a PT_NOTE segment.
bool Read(const char* path, uint8_t* id, uint32_t* length);

}  // namespace ExecutableBuildId

}  // namespace heapgraph
