// heap/runtime/: call-stack capture for the allocation hooks. Walks the stack by the DWARF-CFI
// (.eh_frame) rules of each return address, so stacks continue through code built without frame
// pointers, such as Debian's libstdc++ operator new and glibc: each frame costs a lookup in
// UnwindRuleCache, filled on a miss by EhFrameRules. A frame whose rule is not one of the simple
// shapes (CFA expressions, realigned stacks, code without an FDE whose rbp is not 0) steps by its
// complete rule (heap/platform/DwarfWalk::StepFrame) and the walk goes on by cached rules after
// it. A signal's return trampoline has a cached rule of its own (the interrupted frame's rip, rsp
// and rbp at fixed words of the kernel's ucontext, read from its FDE once); the frame the signal
// interrupted steps by its complete rule at its exact address. Only when a complete step fails
// does the complete, uncached walk (DwarfWalk::Walk) take the capture from the start; it gives the
// same frames wherever both apply. Code without an FDE and rbp == 0 (ld.so's _dl_start_user,
// below every library constructor) ends both. heapgraph's own frames at the top
// (the hook, the recorder) are stepped by frame pointer, not by rule: libheapgraph.so is built
// with frame pointers. Never allocates from the host's malloc, never takes a lock (the loader's
// included: objects are found with glibc's lock-free _dl_find_object, LoadedObject), so a hook
// running while another thread holds the loader's lock, or a child forked at any moment, never
// waits. No libunwind: the recorder loads no unwinding library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

class ForkChildHints;
class WalkMemo;

namespace StackCapture {

inline constexpr uint32_t kMaxOwnFrames = 4;  // Capture, the recorder entry, the hook, slack

// Frames whose return address lies in [begin, end) (heapgraph's own code) are skipped at the
// top of every captured stack.
void SetOwnCode(uintptr_t begin, uintptr_t end);
// Maps the rule walk's table; call once before the first capture. unwind_by_rules (option
// unwind_rules): walk by cached .eh_frame rules, the complete walk only for the stacks they cannot
// describe; false: the complete walk for every stack (slow; for tests and comparisons).
// memo (option unwind_memo): a walk may take the frames above one its thread's last walk also
// passed from that thread's WalkMemo, after checking the stack words that walk read.
void Initialize(bool unwind_by_rules = true, bool memo = true);
// The rule walk's table mapping (UnwindRuleCache), for the registry of the unwinder's own
// mappings (UnwinderMappings: no leak-scan root); false when the walk is off.
bool RuleTable(uintptr_t* begin, uintptr_t* end);

// Every rule read from .eh_frame while `hints` is reporting (a forked child, until it writes a
// recording of its own) is reported there (ForkChildHints::kRule) for the process that forked
// it (its page may be mapped later: ForkChildHints::Initialize). Once at start; null: none.
void ReportMissesTo(ForkChildHints* hints);
// The parent's side, before a fork: reads the rule of a reported return address from this
// process's own loaded objects and keeps it, as a miss of its own walk would, unless no FDE covers
// the address; so the next child inherits it. True when it stored one (false: cached already,
// no FDE there, or the rule walk is off).
bool LearnRule(uintptr_t return_address);

// After every dlclose, recording or not: the rule walk's cache starts a new generation
// (UnwindRuleCache::Forget), so no rule read before the call is used after it, not even for a
// library loaded later at the same address. Wait-free.
void ForgetRuleWalkRules();

// Return addresses of the calling thread, innermost first, own frames skipped. `out` must hold
// max_depth + kMaxOwnFrames entries. Returns the number of frames stored (<= max_depth). `memo`:
// the calling thread's own WalkMemo (in its static TLS, zero-initialized), or null.
uint32_t Capture(uintptr_t* out, uint32_t max_depth, WalkMemo* memo = nullptr);

}  // namespace StackCapture

}  // namespace heapgraph
