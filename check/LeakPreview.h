// check/: the first bytes of each direct leak, when the user asks for heap contents in a report
// (option leak_preview, docs/configuration.md): read from this process's memory through
// process_vm_readv, so a block freed or unmapped since the scan gives no preview instead of a
// fault. Never called unless asked: by default no report holds heap contents.
#pragma once

#include <cstdint>

#include "report/LeakReport.h"

namespace heapgraph::report {

// Sets LeakRecord::preview (hex) of every direct, unsuppressed record with an example block: the
// first min(bytes, block size) bytes of its lowest block.
void AddLeakPreviews(LeakReport& report, uint32_t bytes);

}  // namespace heapgraph::report
