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

struct RootOrigin {
  RootKind kind = RootKind::kOther;
  int32_t thread = 0;            // tid for kRegisters / kStack / kTls
  uint32_t module = UINT32_MAX;  // kGlobal: index into the module segments' modules
  uint64_t address = 0;          // the root word's address (0 for a register)
  uint32_t reg = UINT32_MAX;     // kRegisters: index into roots::ThreadInfo::regs
  uint32_t reserved = 0;
  uint64_t region_begin = 0;  // the mapping holding the word (0, 0 when none is known)
  uint64_t region_end = 0;
  uint64_t stack_pointer = 0;  // kStack: the thread's stack pointer
  uint64_t frame_pc = 0;       // kStack: the frame's code address (see above); 0 if unknown
};

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
