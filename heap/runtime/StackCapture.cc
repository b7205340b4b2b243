#include "heap/runtime/StackCapture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <atomic>
#include <cstring>

#include "heap/platform/EhFrameRules.h"
#include "heap/platform/LoadedObject.h"
#include "heap/runtime/UnwindRuleCache.h"
#include "heap/runtime/WalkMemo.h"

// libunwind's dl_iterate_phdr callback (dwarf_callback in src/dwarf/Gfind_proc_info-lsb.c) gets a
// struct dwarf_callback_data whose first member is the address being looked up, in every release
// from 0.99 through 1.8. A libunwind that changed it would make every lookup miss: stacks would
// stop at the first frame the per-thread cache does not know (RecorderUnwindTest fails).
static_assert(UNW_VERSION_MAJOR == 1, "AnswerUnwinderLookup reads libunwind 1.x's callback data");

namespace heapgraph {
namespace {
uintptr_t own_begin = 0;
uintptr_t own_end = 0;
// libunwind's executable segment; empty until Initialize.
uintptr_t unwinder_begin = 0;
uintptr_t unwinder_end = 0;
__thread bool t_in_unwinder __attribute__((tls_model("initial-exec"))) = false;

// Code ranges unloaded by dlclose (ForgetUnloadedCode): published by stale_count (release).
struct StaleRange {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
};
StaleRange stale[StackCapture::kMaxStaleRanges];
std::atomic<uint32_t> stale_count{0};
std::atomic_flag stale_lock = ATOMIC_FLAG_INIT;

// True when one of the n frames lies in a range of unloaded code.
bool PassesStaleCode(const uintptr_t* frames, int n) {
  uint32_t count = stale_count.load(std::memory_order_acquire);
  for (uint32_t r = 0; r < count; ++r) {
    uintptr_t begin = stale[r].begin.load(std::memory_order_relaxed);
    uintptr_t end = stale[r].end.load(std::memory_order_relaxed);
    for (int i = 0; i < n; ++i) {
      if (frames[i] >= begin && frames[i] < end) return true;
    }
  }
  return false;
}

// libunwind's step-by-step unwind (its rule cache honours unw_flush_cache), from this frame on:
// the same frames unw_backtrace gives, without its trace cache.
__attribute__((noinline)) int StepBacktrace(uintptr_t* out, int size) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) < 0 || unw_init_local(&cursor, &context) < 0) return 0;
  int n = 0;
  while (n < size && unw_step(&cursor) > 0) {
    unw_word_t ip;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0) break;
    out[n++] = ip;
  }
  return n;
}

bool InUnwinderCode(uintptr_t address) {
  return address >= unwinder_begin && address < unwinder_end;
}

// The rule walk (WalkByRules): rules of return addresses, filled from .eh_frame on a miss.
UnwindRuleCache rule_cache;
bool rules_enabled = false;
bool memo_enabled = false;  // option unwind_memo (WalkMemo)
// No walk reads further than this above the stack pointer it started from.
constexpr uintptr_t kMaxStackSpan = uintptr_t{1} << 30;

// A miss: the rule from .eh_frame, kept for the next walk.
__attribute__((noinline)) UnwindRuleCache::Packed ReadRule(uintptr_t return_address,
                                                           uint32_t generation) {
  UnwindRule rule = EhFrameRules::Find(return_address - 1);  // the call instruction
  return rule_cache.Store(return_address, generation, rule);
}

// A walk without a memo (WalkMemo::Pass's interface, all no-ops).
struct NoMemo {
  void Record(int, uintptr_t, uintptr_t, uintptr_t) {}
  void RecordRbpSlot(int, uintptr_t) {}
  int Reuse(int, int, uintptr_t, uintptr_t*, uintptr_t*, uintptr_t*, uintptr_t*) { return 0; }
};

// The return addresses from the frame that returns to `ip` with stack pointer `sp` and frame
// pointer `fp` on, by cached rules of `generation`; -1 when a frame needs libunwind (no FDE, a
// signal frame, a rule the cache does not hold) or the frames do not climb the stack (CFA above
// the previous one, within kMaxStackSpan of the first), so that libunwind takes the whole capture.
// *ended: the walk stopped at the outermost frame. `memo` records each frame and may supply the
// frames above one the last walk also passed (WalkMemo).
template <typename Memo>
int WalkByRules(uintptr_t* out, int size, uintptr_t ip, uintptr_t sp, uintptr_t fp,
                uint32_t generation, Memo& memo, bool* ended) {
  uintptr_t limit = sp + kMaxStackSpan;
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
      *ended = rule.end();
      return rule.end() ? n : -1;
    }
    uintptr_t cfa = (rule.cfa_from_rbp() ? fp : sp) + rule.cfa_offset();
    if (cfa < sp + sizeof(uintptr_t) || cfa > limit) return -1;
    ip = reinterpret_cast<const uintptr_t*>(cfa)[-1];
    if (rule.rbp_saved()) {
      uintptr_t slot = cfa - rule.rbp_depth();
      if (slot < sp) return -1;
      memo.RecordRbpSlot(n - 1, slot);
      fp = *reinterpret_cast<const uintptr_t*>(slot);
    }
    sp = cfa;
    if (ip == 0) return -1;
  }
}

// The stack pointer of the outermost frame above `from` (whose return address is the last one a
// walk stored), by the same rules and checks as WalkByRules, nothing stored; 0 when the frames
// do not reach one (a frame needs libunwind, or more than kMaxClimb frames).
uintptr_t ClimbToEnd(const WalkMemo::Frame& from, uint32_t generation, uintptr_t limit) {
  constexpr int kMaxClimb = 1024;
  uintptr_t ip = from.ip, sp = from.sp, fp = from.fp;
  for (int steps = 0; steps < kMaxClimb; ++steps) {
    UnwindRuleCache::Packed rule;
    if (!rule_cache.Find(ip, generation, &rule)) rule = ReadRule(ip, generation);
    if (!rule.simple()) return rule.end() ? sp : 0;
    uintptr_t cfa = (rule.cfa_from_rbp() ? fp : sp) + rule.cfa_offset();
    if (cfa < sp + sizeof(uintptr_t) || cfa > limit) return 0;
    ip = reinterpret_cast<const uintptr_t*>(cfa)[-1];
    if (rule.rbp_saved()) {
      uintptr_t slot = cfa - rule.rbp_depth();
      if (slot < sp) return 0;
      fp = *reinterpret_cast<const uintptr_t*>(slot);
    }
    sp = cfa;
    if (ip == 0) return 0;
  }
  return 0;
}

// The rule walk from (ip, sp, fp), through the thread's memo when it has one, it is on and no
// other walk of the thread is in progress. A walk cut at `size` frames from a stack the memo has
// not proven its own climbs on to the outermost frame (not every time: WalkMemo::MayClimb).
int Walk(uintptr_t* out, int size, uintptr_t ip, uintptr_t sp, uintptr_t fp, WalkMemo* memo) {
  uint32_t generation = rule_cache.Generation();
  bool ended = false;
  if (memo == nullptr || !memo_enabled || size > WalkMemo::kMaxFrames || !memo->Enter()) {
    NoMemo none;
    return WalkByRules(out, size, ip, sp, fp, generation, none, &ended);
  }
  WalkMemo::Pass pass(*memo, generation);
  int n = WalkByRules(out, size, ip, sp, fp, generation, pass, &ended);
  if (n > 0) {
    const WalkMemo::Frame& last = pass.Last(n);
    uintptr_t end_sp = ended ? last.sp : 0;
    if (!ended && !pass.Covered(sp, last.sp) && memo->MayClimb()) {
      end_sp = ClimbToEnd(last, generation, sp + kMaxStackSpan);
    }
    pass.Commit(n, sp, end_sp, &t_in_unwinder);
  }
  memo->Leave();
  return n;
}

// Heapgraph's own frames at the top of the stack, stepped by frame pointer (every function of
// libheapgraph.so keeps one: HEAPGRAPH_CORE_FLAGS) instead of a rule lookup each. On entry
// (ip, sp, fp) describe the frame returning to `ip`; on success they describe the first frame
// whose return address lies outside [own_begin, own_end). False, with nothing stepped that the
// caller must keep, when a frame pointer does not climb the stack: the caller walks by rules from
// the start instead.
bool StepOwnFrames(uintptr_t* ip, uintptr_t* sp, uintptr_t* fp) {
  constexpr int kMaxOwnSteps = 16;
  const uintptr_t limit = *sp + kMaxStackSpan;
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

// libunwind's capture (today's path): its trace cache, and its stepping unwinder when a frame
// lies in unloaded code.
int LibunwindBacktrace(uintptr_t* out, int size) {
  t_in_unwinder = true;
  int n = unw_backtrace(reinterpret_cast<void**>(out), size);
  if (n > 0 && stale_count.load(std::memory_order_relaxed) != 0 && PassesStaleCode(out, n)) {
    n = StepBacktrace(out, size);
  }
  t_in_unwinder = false;
  return n;
}

}  // namespace

void StackCapture::SetOwnCode(uintptr_t begin, uintptr_t end) {
  own_begin = begin;
  own_end = end;
}

void StackCapture::Initialize(bool unwind_by_rules, bool memo) {
  rules_enabled = unwind_by_rules && rule_cache.Initialize();
  memo_enabled = memo;
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  auto unwinder = reinterpret_cast<uintptr_t>(&unw_backtrace);
  LoadedObject object;
  if (LoadedObject::Find(unwinder, &object)) {
    object.ExecutableSegment(unwinder, &unwinder_begin, &unwinder_end);
  }
}

bool StackCapture::RuleTable(uintptr_t* begin, uintptr_t* end) {
  *begin = rule_cache.begin();
  *end = rule_cache.end();
  return rules_enabled;
}

void StackCapture::AfterForkInChild() {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
}

void StackCapture::ForgetRuleWalkRules() {
  rule_cache.Forget();
}

void StackCapture::FlushUnwindRules() {
  unw_flush_cache(unw_local_addr_space, 0, 0);
}

void StackCapture::ForgetUnloadedCode(uintptr_t begin, uintptr_t end) {
  while (stale_lock.test_and_set(std::memory_order_acquire)) {
  }
  uint32_t count = stale_count.load(std::memory_order_relaxed);
  bool known = false;
  for (uint32_t i = 0; i < count && !known; ++i) {
    known = stale[i].begin.load(std::memory_order_relaxed) <= begin &&
            stale[i].end.load(std::memory_order_relaxed) >= end;
  }
  if (!known && count < kMaxStaleRanges) {
    stale[count].begin.store(begin, std::memory_order_relaxed);
    stale[count].end.store(end, std::memory_order_relaxed);
    stale_count.store(count + 1, std::memory_order_release);
  } else if (!known) {  // full: the last range widens (more captures take the slow path)
    StaleRange& last = stale[kMaxStaleRanges - 1];
    if (begin < last.begin.load(std::memory_order_relaxed)) last.begin.store(begin);
    if (end > last.end.load(std::memory_order_relaxed)) last.end.store(end);
  }
  stale_lock.clear(std::memory_order_release);
}

bool StackCapture::IsUnwinderCall(uintptr_t return_address) {
  return t_in_unwinder && InUnwinderCode(return_address);
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
  if (n < 0) n = LibunwindBacktrace(out, size);
  if (n <= 0) return 0;
  uint32_t skip = 0;
  while (skip < static_cast<uint32_t>(n) && out[skip] >= own_begin && out[skip] < own_end) ++skip;
  uint32_t depth = static_cast<uint32_t>(n) - skip;
  if (depth > max_depth) depth = max_depth;
  if (skip != 0) memmove(out, out + skip, depth * sizeof(uintptr_t));
  return depth;
}

// What glibc's dl_iterate_phdr would give the callback for that one object; libunwind's callback
// ignores every other object anyway (it checks the address against each object's PT_LOADs).
bool StackCapture::AnswerUnwinderLookup(PhdrCallback callback, void* data, int* result) {
  if (!t_in_unwinder || !InUnwinderCode(reinterpret_cast<uintptr_t>(callback))) return false;
  *result = 0;
  uintptr_t address = *static_cast<const uintptr_t*>(data);
  LoadedObject object;
  if (!LoadedObject::Find(address, &object) || object.phdr == nullptr) return true;
  dl_phdr_info info;
  memset(&info, 0, sizeof(info));
  info.dlpi_addr = object.bias;
  info.dlpi_name = object.name;
  info.dlpi_phdr = object.phdr;
  info.dlpi_phnum = object.phnum;
  *result = callback(&info, sizeof(info), data);
  return true;
}

}  // namespace heapgraph
