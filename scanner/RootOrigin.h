// scanner/: where the root word of a retention path (scanner/RetentionPaths) lies, in the
// snapshot child: a stopped thread's register (which one), its stack (which thread, its SP and
// the code address of the frame holding the word), its static TLS or thread control block, a
// module's writable data, or other private writable memory (its mapping's range). The frame is
// found by a heuristic, not by unwinding: the nearest word below the root word (towards SP) that
// points into a module's code is taken as the return address into the function whose frame holds
// the word; with none down to SP, the thread's instruction pointer. No host malloc. May include
// heap/ and roots/.
#pragma once

#include <cstdint>
#include <span>

#include "roots/ProcessMappings.h"
#include "roots/ThreadInfo.h"
#include "scanner/RetentionPaths.h"
#include "scanner/RootRanges.h"
#include "scanner/TypedScanResult.h"
#include "scanner/types/ModuleSegments.h"

namespace heapgraph::scanner {

struct RootContext {
  const RootRanges& roots;
  std::span<const roots::ThreadInfo> threads;
  uint64_t static_tls_size;  // 0 if unknown: no root is then kTls
  // glibc's sizeof(struct pthread), the part of static_tls_size above the thread pointer on
  // x86-64; 0 if unknown (then static_tls_size bytes are taken on both sides, and the top frames
  // of a thread's stack, just below its TLS, may be taken for TLS).
  uint64_t tcb_size;
  const types::ModuleSegments* modules;    // null: no root is kGlobal and no frame is found
  const roots::ProcessMappings* mappings;  // null: no region
};

// The origin of `root`. With `describe_frame`, a stack root's frame_pc is searched (stack words
// read with plain loads, at most 64 KiB below the word).
RootOrigin ClassifyRoot(const RetentionPaths::Root& root, const RootContext& context,
                        bool describe_frame = false);

}  // namespace heapgraph::scanner
