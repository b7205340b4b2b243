// heap/platform/: clearing the stack below the caller. Frames laid down there next would keep, in
// slots they never write, values of earlier calls (the allocation hooks' and a check's frames hold
// block addresses), which a conservative scan reads as the program's. Callers: the scan before it
// starts (scanner/LeakScan), a check after freeing its report (check/LeakCheck), and
// libheapgraph.so's check entry before it returns to the program (heap/runtime/CheckCall).
#pragma once

namespace heapgraph {

// Zeroes 64 KiB of stack below the caller's frame (needs that much stack left; a check needs
// more). Never inlined, so the area lies below the caller. A whole page of it that is not in
// memory (mincore) is dropped instead (MADV_DONTNEED), not faulted in: a never-written page reads
// as zeros already, and a swapped-out one of private memory is discarded with its stale words (a
// stack in shared memory, swapped out, keeps them). A check on a fresh stack, or a program whose
// stack never went that deep, faults in none of the 16 pages.
void ScrubStackBelow();

}  // namespace heapgraph
