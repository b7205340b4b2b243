// heap/runtime/: bytes of a new heap block that the program has not written yet (all of a malloc'd
// block, the grown part of a realloc'd one) are made to read as zero before the block is handed
// out (option `scrub`, on by default). glibc hands out freed memory again without clearing it, so
// those bytes hold whatever an earlier block left there: pointers to blocks that were freed since,
// whose addresses a later allocation may get again. A conservative scan would take such a stale
// word for a reference and keep the later block alive (yaml-cpp's suite: an uninitialised array
// of a libstdc++ locale cache kept a leaked YAML::Node tree "reachable", docs/leak-scan.md).
// Cost: one memset of the new bytes for blocks up to 64 KiB (their first lines prefetched while the
// hook walks the stack: recycled blocks are often cold); a larger block that is a mapping of
// its own (glibc's mmap'd chunks) is already zero and is not touched; a larger one carved from a
// heap has its words read and only the non-zero ones written, so pages nobody touched stay
// unbacked. No malloc, no lock, no syscall: safe in every hook.
#pragma once

#include <cstddef>

namespace heapgraph {

// Zeroes bytes [begin, end) of `block`, a live block from glibc's malloc. Nothing when begin >=
// end.
void ClearFreshBytes(void* block, size_t begin, size_t end);

// Starts fetching the first lines of bytes [begin, end) of `block` into the cache (up to 1 KiB),
// the lines ClearFreshBytes will write, so that they arrive while the caller does other work (the
// hook walks and interns the stack first). Never faults: a prefetch of an unmapped line is
// dropped. Nothing for blocks ClearFreshBytes does not memset.
void PrefetchFreshBytes(const void* block, size_t begin, size_t end);

}  // namespace heapgraph
