#include "scanner/RootOrigin.h"

#include <algorithm>

namespace heapgraph::scanner {
namespace {

constexpr uint64_t kFrameSearchBytes = 64 * 1024;

// The thread whose static TLS or thread control block holds `address`, or 0. x86-64 (TLS variant
// II): the static TLS blocks lie below the thread pointer (fs_base), the control block (struct
// pthread, whose pthread_setspecific slots count as TLS too) above it; both fit in glibc's static
// TLS size: [fs_base - (size - tcb), fs_base + tcb) is taken when the control block's size is
// known, else [fs_base - size, fs_base + size). Other threads' areas sit at the top of their stack
// mappings (their first frames just below), the main thread's in a mapping of ld.so's: checked
// before either.
int32_t StaticTlsOwner(uint64_t address, const RootContext& c) {
#if defined(__x86_64__)
  if (c.static_tls_size == 0) return 0;
  bool split = c.tcb_size != 0 && c.tcb_size < c.static_tls_size;
  uint64_t below = split ? c.static_tls_size - c.tcb_size : c.static_tls_size;
  uint64_t above = split ? c.tcb_size : c.static_tls_size;
  for (const roots::ThreadInfo& t : c.threads) {
    uint64_t tp = t.regs[roots::ThreadInfo::kFsBase];
    if (tp != 0 && address + below >= tp && address < tp + above) return t.tid;
  }
#else
  (void)address;
  (void)c;
#endif
  return 0;
}

bool IsCode(uint64_t word, const types::ModuleSegments& modules) {
  const types::Segment* s = modules.Find(word, 1);
  return s != nullptr && s->kind == types::SegmentKind::kCode;
}

// The frame's code address of a stack word (RootOrigin.h): the nearest code address below it
// within the range, else the thread's instruction pointer when its SP lies in the range (the
// thread that ran the check was captured on the check's own stack: 0 then).
uint64_t FramePc(uint64_t address, const RootRange& range, const roots::ThreadInfo& thread,
                 bool sp_in_range, const types::ModuleSegments& modules) {
  if (!range.direct) return 0;
  uint64_t low = std::max<uint64_t>(range.begin, sp_in_range ? thread.stack_pointer : 0);
  if (address > low + kFrameSearchBytes) low = address - kFrameSearchBytes;
  for (uint64_t at = (address & ~uint64_t{7}); at >= low + 8;) {
    at -= 8;
    uint64_t word = *reinterpret_cast<const uint64_t*>(at);
    if (IsCode(word, modules)) return word;
  }
  return sp_in_range ? thread.regs[roots::ThreadInfo::kInstructionPointer] : 0;
}

void FillStack(RootOrigin& o, const RootRange& range, const RootContext& c, bool describe_frame) {
  o.kind = RootKind::kStack;
  const roots::ThreadInfo* owner = nullptr;
  for (const roots::ThreadInfo& t : c.threads) {
    bool holds =
        t.stack_pointer + roots::ThreadInfo::kRedZone >= range.begin && t.stack_pointer < range.end;
    if (holds || (t.is_caller && owner == nullptr)) owner = &t;
  }
  if (owner == nullptr) return;
  o.thread = owner->tid;
  // The thread that ran the check: its program stack is scanned from the program's frame that
  // called the check (the range's start), not from the SP captured on the check's own stack.
  bool sp_in_range = owner->stack_pointer + roots::ThreadInfo::kRedZone >= range.begin &&
                     owner->stack_pointer < range.end;
  o.stack_pointer = sp_in_range ? owner->stack_pointer : range.begin;
  if (describe_frame && c.modules != nullptr) {
    o.frame_pc = FramePc(o.address, range, *owner, sp_in_range, *c.modules);
  }
}

}  // namespace

RootOrigin ClassifyRoot(const RetentionPaths::Root& root, const RootContext& c,
                        bool describe_frame) {
  RootOrigin o;
  o.address = root.address;
  if (root.range == RetentionPaths::kNone) {
    o.kind = RootKind::kRegisters;
    o.thread = c.threads[root.thread].tid;
    o.reg = root.reg;
    return o;
  }
  if (c.mappings != nullptr) {
    if (const roots::ProcessMappings::Mapping* m = c.mappings->Find(root.address)) {
      o.region_begin = m->start;
      o.region_end = m->end;
    }
  }
  if (int32_t tid = StaticTlsOwner(root.address, c)) {
    o.kind = RootKind::kTls;
    o.thread = tid;
    return o;
  }
  const RootRange& range = c.roots.ranges()[root.range];
  if (range.thread_stack) {
    FillStack(o, range, c, describe_frame);
    return o;
  }
  const types::Segment* s = c.modules != nullptr ? c.modules->Find(root.address, 8) : nullptr;
  if (s != nullptr && s->kind == types::SegmentKind::kWritable) {
    o.kind = RootKind::kGlobal;
    o.module = s->module;
  }
  return o;
}

}  // namespace heapgraph::scanner
