// scanner/: the heaps of glibc malloc's thread arenas among the process's mappings. They are
// malloc's own memory, like the brk heap ("[heap]"), and never a root: the program's blocks in
// them are recorded blocks, reached through their blocks only; every other byte there is free
// memory or an allocation made on a thread the recorder ignores (a leak check, a tool thread). A
// check run from a thread with an arena of its own leaves its freed working memory there (the
// leaked blocks' addresses among it): scanned as a root, it hid the next check's leaks, in the
// process and in its forked children. glibc maps each such heap at a multiple of HEAP_MAX_SIZE
// (64 MiB on 64-bit) and starts it with a heap_info {ar_ptr, prev, size, mprotect_size, ...};
// the first heap of an arena holds the arena right after it. Only a 64 MiB-aligned address
// inside a private writable anonymous mapping whose words match that shape is taken for a heap.
// The main arena's state (main_arena, a struct malloc_state in libc's writable data) is malloc's
// too: its chunk pointers (fast bins, top, last_remainder, bins) are allocator metadata, and
// last_remainder keeps the address of the chunk glibc last split off for a small request after
// that chunk was merged again and handed out inside a larger block. As a root it kept such a
// block alive: the newest leak of a check under heap churn was missed in 5-7 % of the checks
// (tests/stress churn). It is found by the shape of its bins (an empty bin's two words point 16
// bytes before themselves; its `next` is itself or a thread arena); not found, it stays a root.
// Reads with process_vm_readv (an unreadable page is skipped, never a fault). No host malloc.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "roots/ProcessMappings.h"
#include "scanner/MmapAllocator.h"

namespace heapgraph::scanner {

namespace MallocHeaps {

using Ranges =
    std::vector<std::pair<uint64_t, uint64_t>, MmapAllocator<std::pair<uint64_t, uint64_t>>>;

// glibc's HEAP_MAX_SIZE on 64-bit (2 * DEFAULT_MMAP_THRESHOLD_MAX).
inline constexpr uint64_t kHeapMax = uint64_t{64} << 20;

// Each heap's [start, start + its read-write size), clipped to the mapping that holds its start,
// and main_arena's bytes when found.
// An aligned address inside one of `own` (heapgraph's memory, never malloc's: the recorder's 2 GiB
// of free-slot stacks, 32 such addresses) is not read: each read of a page never written maps it.
Ranges Find(const roots::ProcessMappings& mappings,
            std::span<const std::pair<uint64_t, uint64_t>> own = {});

// Whether the first words of a candidate at `start` (64 MiB-aligned) are a heap_info: ar_ptr,
// prev, size, mprotect_size.
bool LooksLikeHeapInfo(uint64_t start, const uint64_t (&words)[4]);

// main_arena (glibc 2.26 and later, 64-bit: a 2,200-byte struct malloc_state) in `words`, libc's
// writable data as read from `begin`: its [start, end), or {0, 0} when nothing there has its
// shape. `arenas`: the thread arenas' addresses (what its `next` may hold besides itself).
std::pair<uint64_t, uint64_t> MainArenaIn(std::span<const uint64_t> words, uint64_t begin,
                                          std::span<const uint64_t> arenas);

}  // namespace MallocHeaps

}  // namespace heapgraph::scanner
