#include "heap/runtime/StackCapture.h"

#include <cstring>

#include "heap/platform/DwarfWalk.h"
#include "heap/platform/EhFrameRules.h"
#include "heap/platform/FrameRegisters.h"
#include "heap/platform/StackWindow.h"
#include "heap/runtime/ForkChildHints.h"
#include "heap/runtime/UnwindRuleCache.h"
#include "heap/runtime/WalkMemo.h"

namespace heapgraph {
namespace {
uintptr_t own_begin = 0;
uintptr_t own_end = 0;
// A byte of the thread's static TLS: where its stack's proof is anchored (HomeStack::Prove).
__thread char t_anchor __attribute__((tls_model("initial-exec"))) = 0;

// The rule walk (WalkByRules): rules of return addresses, filled from .eh_frame on a miss.
UnwindRuleCache rule_cache;
bool rules_enabled = false;
// Where a forked child reports the rules it reads, while it reports (ReportMissesTo); or null.
ForkChildHints* miss_hints = nullptr;
bool memo_enabled = false;  // option unwind_memo (WalkMemo)

// The rule of a return address's frame: the one at its call instruction.
UnwindRule RuleOfReturnAddress(uintptr_t return_address) {
  return EhFrameRules::Find(return_address - 1);
}

// A miss: the rule from .eh_frame, kept for the next walk.
__attribute__((noinline)) UnwindRuleCache::Packed ReadRule(uintptr_t return_address,
                                                           uint32_t generation) {
  UnwindRule rule = RuleOfReturnAddress(return_address);
  if (miss_hints != nullptr && miss_hints->reporting()) {
    miss_hints->Report(ForkChildHints::kRule, return_address);
  }
  return rule_cache.Store(return_address, generation, rule);
}

// A walk without a memo (WalkMemo::Pass's interface, all no-ops).
struct NoMemo {
  void Record(int, uintptr_t, uintptr_t, uintptr_t) {}
  void RecordRbpSlot(int, uintptr_t) {}
  int Reuse(int, int, uintptr_t, uintptr_t*, uintptr_t*, uintptr_t*, uintptr_t*) { return 0; }
};

// Where a rule walk met a frame whose cached rule is not simple (a signal frame, an expression,
// code without an FDE whose rbp is not 0): out[n - 1] is its return address, sp and fp its stack
// pointer and rbp. n == 0: none (the walk ended, or failed otherwise).
struct Handoff {
  int n = 0;
  uintptr_t ip = 0, sp = 0, fp = 0;
};

// The caller of the frame (*ip, *sp, *fp) by its simple cached rule: *ip its return address at
// CFA - 8, *sp the CFA, *fp read from its slot (*rbp_slot) when the rule saved rbp, else kept.
// False, nothing changed, when the step does not climb the stack: the CFA not above *sp or above
// `limit`, the slot below *sp. The one cached step of every rule walk (inline: the churn path).
__attribute__((always_inline)) inline bool StepBySimpleRule(UnwindRuleCache::Packed rule,
                                                            uintptr_t limit, uintptr_t* ip,
                                                            uintptr_t* sp, uintptr_t* fp,
                                                            uintptr_t* rbp_slot) {
  const uintptr_t cfa = (rule.cfa_from_rbp() ? *fp : *sp) + rule.cfa_offset();
  if (cfa < *sp + sizeof(uintptr_t) || cfa > limit) return false;
  const uintptr_t slot = rule.rbp_saved() ? cfa - rule.rbp_depth() : 0;
  if (rule.rbp_saved() && slot < *sp) return false;
  *ip = reinterpret_cast<const uintptr_t*>(cfa)[-1];
  if (rule.rbp_saved()) *fp = *reinterpret_cast<const uintptr_t*>(slot);
  *sp = cfa;
  *rbp_slot = slot;
  return true;
}

// The frame of a signal's return trampoline by its cached rule (UnwindRule::signal_frame): the
// interrupted frame's rip, rsp and rbp from the rule's words above the trampoline's stack pointer
// (the kernel's ucontext), the other registers unknown; the window moves to the interrupted stack
// (an alternate signal stack's handler returns to the thread's stack). False when a word lies
// outside the window.
bool StepSignalFrame(UnwindRuleCache::Packed rule, FrameRegisters* registers,
                     DwarfWalk::Position* position) {
  const StackWindow window{registers->sp(), position->high};
  uintptr_t words[3];
  for (int i = 0; i < 3; ++i) {
    if (!window.Read(window.low + rule.signal_word(i) * sizeof(uintptr_t), sizeof(uintptr_t),
                     &words[i])) {
      return false;
    }
  }
  registers->known = 0;
  registers->Set(FrameRegisters::kRip, words[0]);
  registers->Set(FrameRegisters::kRsp, words[1]);
  registers->Set(FrameRegisters::kRbp, words[2]);
  position->EnterInterrupted(words[1]);
  return true;
}

// The return addresses from the frame that returns to `ip` with stack pointer `sp` and frame
// pointer `fp` on, by cached rules of `generation`; -1 when a frame's rule is not simple (then
// *handoff says where: MixedWalk goes on from there) or the frames do not climb the stack (CFA
// above the previous one, within DwarfWalk::kMaxStackSpan of the first; DwarfWalk then takes the
// whole capture). Code without an FDE and rbp == 0 ends the stack, as it ends the complete walk.
// *ended: the walk stopped at the outermost frame. `memo` records each frame and may supply the
// frames above one the last walk also passed (WalkMemo).
template <typename Memo>
int WalkByRules(uintptr_t* out, int size, uintptr_t ip, uintptr_t sp, uintptr_t fp,
                uint32_t generation, Memo& memo, bool* ended, Handoff* handoff) {
  const uintptr_t limit = DwarfWalk::WindowEnd(sp);
  int n = 0;
  for (;;) {
    n += memo.Reuse(n, size - n, limit, &ip, &sp, &fp, out);
    memo.Record(n, ip, sp, fp);
    out[n++] = ip;
    if (n == size) return n;
    UnwindRuleCache::Packed rule;
    if (__builtin_expect(!rule_cache.Find(ip, generation, &rule), 0)) {
      rule = ReadRule(ip, generation);
    }
    if (!rule.simple()) {
      *ended = rule.end() || (rule.no_fde() && fp == 0);
      if (*ended) return n;
      *handoff = Handoff{n, ip, sp, fp};
      return -1;
    }
    uintptr_t slot;
    if (!StepBySimpleRule(rule, limit, &ip, &sp, &fp, &slot)) return -1;
    if (rule.rbp_saved()) memo.RecordRbpSlot(n - 1, slot);
    if (ip == 0) return -1;
  }
}

// The stack pointer of the outermost frame above `from` (whose return address is the last one a
// walk stored), by the same rules and checks as WalkByRules, nothing stored; 0 when the frames
// do not reach one (a frame needs the complete walk, or more than kMaxClimb frames).
uintptr_t ClimbToEnd(const WalkMemo::Frame& from, uint32_t generation, uintptr_t limit) {
  constexpr int kMaxClimb = 1024;
  uintptr_t ip = from.ip, sp = from.sp, fp = from.fp;
  for (int steps = 0; steps < kMaxClimb; ++steps) {
    UnwindRuleCache::Packed rule;
    if (!rule_cache.Find(ip, generation, &rule)) rule = ReadRule(ip, generation);
    if (!rule.simple()) return rule.end() || (rule.no_fde() && fp == 0) ? sp : 0;
    uintptr_t slot;
    if (!StepBySimpleRule(rule, limit, &ip, &sp, &fp, &slot) || ip == 0) return 0;
  }
  return 0;
}

// The walk on from a Handoff: its frame steps as the complete walk steps one
// (DwarfWalk::StepFrame: its complete rule, or its frame pointer in code without an FDE) from what
// the rule walk knows (rip, rsp, rbp), and the frames after it by cached rules again wherever
// those are simple (a cached step keeps rip, rsp and rbp; the other registers become unknown). A
// signal's return trampoline steps by its cached rule too (StepSignalFrame); the frame the signal
// interrupted then steps by StepFrame at its exact address (not cached: every interrupted
// instruction would take a slot of the table meant for return addresses). Ends where the complete
// walk ends; -1 when a complete step fails (it may have needed a register no cached step kept): the
// caller then takes the complete walk from the start. No memo.
int MixedWalk(uintptr_t* out, int size, const Handoff& from, uint32_t generation) {
  constexpr uint32_t kKept =
      1u << FrameRegisters::kRip | 1u << FrameRegisters::kRsp | 1u << FrameRegisters::kRbp;
  FrameRegisters registers;
  registers.known = 0;
  registers.Set(FrameRegisters::kRip, from.ip);
  registers.Set(FrameRegisters::kRsp, from.sp);
  registers.Set(FrameRegisters::kRbp, from.fp);
  DwarfWalk::Position position{false, DwarfWalk::WindowEnd(from.sp)};
  int n = from.n;
  for (;;) {
    uintptr_t ip = registers.ip(), sp = registers.sp(), fp = registers.value[FrameRegisters::kRbp];
    const bool rbp_known = registers.Has(FrameRegisters::kRbp);
    UnwindRuleCache::Packed rule;
    if (!position.interrupted && !rule_cache.Find(ip, generation, &rule)) {
      rule = ReadRule(ip, generation);
    }
    uintptr_t slot;
    DwarfWalk::Next next = DwarfWalk::Next::kStepped;
    if (position.interrupted) {
      next = DwarfWalk::StepFrame(&registers, &position);
    } else if (rule.end()) {
      return n;
    } else if (rule.simple() && (rbp_known || (!rule.cfa_from_rbp() && !rule.rbp_saved()))) {
      if (!StepBySimpleRule(rule, position.high, &ip, &sp, &fp, &slot)) return n;
      registers.known &= kKept;
      registers.Set(FrameRegisters::kRip, ip);
      registers.Set(FrameRegisters::kRsp, sp);
      if (rule.rbp_saved()) registers.Set(FrameRegisters::kRbp, fp);
    } else if (!rule.signal_frame() || !StepSignalFrame(rule, &registers, &position)) {
      next = DwarfWalk::StepFrame(&registers, &position);
    }
    if (next == DwarfWalk::Next::kEnd) return n;
    if (next == DwarfWalk::Next::kFailed) return -1;
    if (!registers.Has(FrameRegisters::kRip) || registers.ip() == 0) return n;
    out[n++] = registers.ip();
    if (n == size) return n;
  }
}

// The rule walk from (ip, sp, fp), through the thread's memo when it has one, it is on and no
// other walk of the thread is in progress, and on by MixedWalk past a frame its cached rules
// cannot step. A walk cut at `size` frames from a stack the memo has not proven its own climbs on
// to the outermost frame (not every time: WalkMemo::MayClimb).
int Walk(uintptr_t* out, int size, uintptr_t ip, uintptr_t sp, uintptr_t fp, WalkMemo* memo) {
  uint32_t generation = rule_cache.Generation();
  bool ended = false;
  Handoff handoff;
  int n;
  if (memo == nullptr || !memo_enabled || size > WalkMemo::kMaxFrames || !memo->Enter()) {
    NoMemo none;
    n = WalkByRules(out, size, ip, sp, fp, generation, none, &ended, &handoff);
  } else {
    WalkMemo::Pass pass(*memo, generation);
    n = WalkByRules(out, size, ip, sp, fp, generation, pass, &ended, &handoff);
    if (n > 0) {
      const WalkMemo::Frame& last = pass.Last(n);
      uintptr_t end_sp = ended ? last.sp : 0;
      if (!ended && !pass.Covered(sp, last.sp) && memo->MayClimb()) {
        end_sp = ClimbToEnd(last, generation, DwarfWalk::WindowEnd(sp));
      }
      pass.Commit(n, sp, end_sp, &t_anchor);
    }
    memo->Leave();
  }
  return n < 0 && handoff.n > 0 ? MixedWalk(out, size, handoff, generation) : n;
}

// Heapgraph's own frames at the top of the stack, stepped by frame pointer (every function of
// libheapgraph.so keeps one: HEAPGRAPH_CORE_FLAGS) instead of a rule lookup each. On entry
// (ip, sp, fp) describe the frame returning to `ip`; on success they describe the first frame
// whose return address lies outside [own_begin, own_end). False, with nothing stepped that the
// caller must keep, when a frame pointer does not climb the stack: the caller walks by rules from
// the start instead.
bool StepOwnFrames(uintptr_t* ip, uintptr_t* sp, uintptr_t* fp) {
  constexpr int kMaxOwnSteps = 16;
  const uintptr_t limit = DwarfWalk::WindowEnd(*sp);
  uintptr_t i = *ip, s = *sp, f = *fp;
  for (int steps = 0; i >= own_begin && i < own_end; ++steps) {
    if (steps == kMaxOwnSteps || f < s || f >= limit || (f & 7) != 0) return false;
    const auto* frame = reinterpret_cast<const uintptr_t*>(f);
    i = frame[1];
    s = f + 2 * sizeof(uintptr_t);
    f = frame[0];
  }
  *ip = i;
  *sp = s;
  *fp = f;
  return true;
}

// The complete walk (DwarfWalk) from the caller, Capture, without Capture's own frame: its first
// frame returns into Capture's caller, as the rule walk's first does.
__attribute__((always_inline)) inline int CompleteWalk(uintptr_t* out, int size) {
  FrameRegisters registers;
  HeapgraphCaptureCallerRegisters(&registers);
  int n = DwarfWalk::Walk(registers, out, nullptr, size);
  if (n <= 1) return 0;
  memmove(out, out + 1, static_cast<size_t>(n - 1) * sizeof(uintptr_t));
  return n - 1;
}

}  // namespace

void StackCapture::SetOwnCode(uintptr_t begin, uintptr_t end) {
  own_begin = begin;
  own_end = end;
}

void StackCapture::Initialize(bool unwind_by_rules, bool memo) {
  rules_enabled = unwind_by_rules && rule_cache.Initialize();
  memo_enabled = memo;
}

bool StackCapture::RuleTable(uintptr_t* begin, uintptr_t* end) {
  *begin = rule_cache.begin();
  *end = rule_cache.end();
  return rules_enabled;
}

void StackCapture::ReportMissesTo(ForkChildHints* hints) {
  miss_hints = hints;
}

// Read and kept as a miss of this process's own walk would be, except where no FDE covers the
// address (no loaded object there: a child's JIT code, a library only the child loaded): no rule
// is ever stored for an address where this process has no code of its own.
bool StackCapture::LearnRule(uintptr_t return_address) {
  if (!rules_enabled) return false;
  const uint32_t generation = rule_cache.Generation();
  UnwindRuleCache::Packed cached;
  if (rule_cache.Find(return_address, generation, &cached)) return false;
  const UnwindRule rule = RuleOfReturnAddress(return_address);
  if (rule.no_fde) return false;
  rule_cache.Store(return_address, generation, rule);
  return true;
}

void StackCapture::ForgetRuleWalkRules() {
  rule_cache.Forget();
}

// Never inlined, and built with frame pointers (HEAPGRAPH_CORE_FLAGS): its frame pointer gives its
// caller's stack pointer and frame pointer, where the rule walk starts.
__attribute__((noinline)) uint32_t StackCapture::Capture(uintptr_t* out, uint32_t max_depth,
                                                         WalkMemo* memo) {
  if (max_depth == 0) return 0;
  int size = static_cast<int>(max_depth + kMaxOwnFrames);
  int n = -1;
  if (rules_enabled) {
    const auto* frame = static_cast<const uintptr_t*>(__builtin_frame_address(0));
    uintptr_t ip = frame[1], sp = reinterpret_cast<uintptr_t>(frame + 2), fp = frame[0];
    if (StepOwnFrames(&ip, &sp, &fp)) {
      n = Walk(out, static_cast<int>(max_depth), ip, sp, fp, memo);  // no own frame to skip
    } else {
      n = Walk(out, size, frame[1], reinterpret_cast<uintptr_t>(frame + 2), frame[0], memo);
    }
  }
  if (n < 0) n = CompleteWalk(out, size);
  if (n <= 0) return 0;
  uint32_t skip = 0;
  while (skip < static_cast<uint32_t>(n) && out[skip] >= own_begin && out[skip] < own_end) ++skip;
  uint32_t depth = static_cast<uint32_t>(n) - skip;
  if (depth > max_depth) depth = max_depth;
  if (skip != 0) memmove(out, out + skip, depth * sizeof(uintptr_t));
  return depth;
}

}  // namespace heapgraph
