// scanner/: lets the snapshot process read the program's memory where it faults. The scan reads
// heap blocks and private readable mappings with plain loads, and some of their pages fault: a
// page of a live block made PROT_NONE (mprotect inside an mmap'd chunk or a memalign'd block), a
// MADV_GUARD_INSTALL guard page (/proc/self/maps still says rw-p), a page of a private file mapping
// past the end of its truncated file (SIGBUS). Install() sets SIGSEGV and SIGBUS handlers that
// make the faulting memory readable and return, so the load runs again: no cost on the marking
// loop, and the scan goes on. A PROT_NONE part of a block (a mapping of its own in the map) gets
// PROT_READ, whole (within the block), so its real contents are scanned; any other faulting page
// (guard page, past a file's end) gets a fresh zero page mapped over it (MAP_FIXED, raw mmap).
// Only this process's copy-on-write image changes, never the program. The pages made readable
// are counted once each (Count()), across this process and every process cloned from it after
// Install() (the marking helper). A fault anywhere else (an address in no block and in no private
// readable mapping of `mappings`, e.g. a reader's wild pointer) is not ours to hide: the handler
// restores the default action and the process dies of the signal as before.
//
// Only for a snapshot process: it changes the process's memory and signal dispositions. Nothing
// it keeps lies in a root (its state is mapped after the snapshot read /proc/self/maps).
// Async-signal-safe; no allocation.
#pragma once

#include <setjmp.h>

#include <cstdint>

#include "roots/ProcessMappings.h"
#include "scanner/BlockIndex.h"

namespace heapgraph::scanner::UnreadablePages {

// `mappings`: the snapshot's map, read before this call; it and `blocks` must outlive every read
// of the program's memory by this process and its clones. False (faults then kill, as without it)
// when the handlers or their state could not be set up.
bool Install(const roots::ProcessMappings& mappings, const BlockIndex& blocks);

// For a scan in the program's own memory (SnapshotProcess::InPlace, in the ptrace helper task,
// whose signal handlers are its own): a fault there must not change the program's pages, so a
// fault (SIGSEGV or SIGBUS raised by the kernel) siglongjmps to `jump` with the value 1 instead,
// where the scan is abandoned. Any other delivery of those signals takes the default action.
// False when the handlers could not be set (a fault then ends the helper task; the scanning
// process scans again with a snapshot process).
bool InstallJump(sigjmp_buf* jump);

// Distinct pages made readable so far by this process and its clones made after Install().
uint64_t Count();

}  // namespace heapgraph::scanner::UnreadablePages
