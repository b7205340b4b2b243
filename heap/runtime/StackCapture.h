// heap/runtime/: call-stack capture for the allocation hooks. Walks the stack by the DWARF-CFI
// (.eh_frame) rules of each return address, so stacks continue through code built without frame
// pointers, such as Debian's libstdc++ operator new and glibc: each frame costs a lookup in
// UnwindRuleCache, filled on a miss by EhFrameRules. A frame whose rule is not one of the simple
// shapes (signal frames, CFA expressions, realigned stacks, JIT code without an FDE) hands the
// whole capture to libunwind's cached DWARF-CFI unwinder (unw_backtrace), which gives the same
// frames wherever both apply. heapgraph's own frames at the top (the hook, the recorder) are
// stepped by frame pointer, not by rule: libheapgraph.so is built with frame pointers. Never
// allocates from the host's malloc.
// Never waits for the dynamic loader's lock either: libunwind (1.x, including Debian 12's 1.6.2)
// finds the unwind tables of an address it has not cached with dl_iterate_phdr, which takes
// glibc's _dl_load_write_lock. That deadlocks a hook running while another thread holds the lock
// and waits for something the hooked thread holds, and hangs a forked child whose parent held the
// lock at the fork. libheapgraph.so therefore interposes dl_iterate_phdr and lets
// AnswerUnwinderLookup answer the unwinder's calls from LoadedObject (glibc's lock-free
// _dl_find_object) with the one object libunwind is looking for.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>

namespace heapgraph {

class WalkMemo;

namespace StackCapture {

inline constexpr uint32_t kMaxOwnFrames = 4;  // Capture, the recorder entry, the hook, slack

// Frames whose return address lies in [begin, end) (heapgraph's own code) are skipped at the
// top of every captured stack.
void SetOwnCode(uintptr_t begin, uintptr_t end);
// Asks for libunwind's per-thread cache (Debian's 1.6.2 is built without it and keeps one global
// cache behind a mutex instead) and finds libunwind's code; call once before the first capture.
// unwind_by_rules (option unwind_rules): walk by cached .eh_frame rules, libunwind only for the
// stacks they cannot describe; false: libunwind for every stack (the behaviour before issue 14).
// memo (option unwind_memo): a walk may take the frames above one its thread's last walk also
// passed from that thread's WalkMemo, after checking the stack words that walk read.
void Initialize(bool unwind_by_rules = true, bool memo = true);
// The rule walk's table mapping (UnwindRuleCache), for the registry of the unwinder's own
// mappings (UnwinderMappings: no leak-scan root); false when the walk is off.
bool RuleTable(uintptr_t* begin, uintptr_t* end);

// In a forked child, from the recorder's pthread_atfork child handler, before any capture: turns
// libunwind's shared cache off (UNW_CACHE_NONE). Another thread of the parent may have held the
// cache's mutex at the fork, and the child would wait for it forever in its first unwind
// (RecorderLoaderTest.ForkedChildrenAllocateWhileAnotherThreadHoldsTheLoaderLock). The child's
// stacks stay as complete; its unwinds skip that cache (each uncached step parses the CFI again;
// libunwind's per-thread trace cache still spares most of them).
void AfterForkInChild();

// After a dlclose: [begin, end) held code that is no longer loaded. libunwind's fast path
// (unw_backtrace's per-thread trace cache, libunwind 1.x) caches each return address's unwind rule
// by address alone and never drops it, not even on unw_flush_cache; a library later loaded at those
// addresses was unwound with the old library's rules: wrong frames, read from wrong stack slots
// (StackOracleTest.LibraryReloadedAtTheSameAddressUsesItsOwnUnwindRules). So the range is marked
// stale for good: a capture whose fast trace has a frame in a stale range is taken again with
// libunwind's step-by-step unwinder, whose rule cache FlushUnwindRules empties: call it once after
// marking every range a dlclose unloaded. Up to kMaxStaleRanges ranges; past that the last one
// widens to cover the new one. Safe against concurrent captures and calls.
inline constexpr uint32_t kMaxStaleRanges = 64;
void ForgetUnloadedCode(uintptr_t begin, uintptr_t end);
// Drops the step-by-step unwinder's cached rules (unw_flush_cache): those of unloaded code may
// have been cached again since the last flush, by captures through a stale range.
void FlushUnwindRules();
// After every dlclose, recording or not: the rule walk's cache starts a new generation
// (UnwindRuleCache::Forget), so no rule read before the call is used after it, not even for a
// library loaded later at the same address. Wait-free.
void ForgetRuleWalkRules();

// True while the calling thread is inside Capture's unwinder and `return_address` (of a call
// into mmap) lies in the unwinder's own code: the mapping is libunwind's, made for heapgraph
// (not, e.g., by a signal handler that interrupted the unwinder).
bool IsUnwinderCall(uintptr_t return_address);

// Return addresses of the calling thread, innermost first, own frames skipped. `out` must hold
// max_depth + kMaxOwnFrames entries. Returns the number of frames stored (<= max_depth). `memo`:
// the calling thread's own WalkMemo (in its static TLS, zero-initialized), or null.
uint32_t Capture(uintptr_t* out, uint32_t max_depth, WalkMemo* memo = nullptr);

// A dl_iterate_phdr call made by libunwind inside Capture on this thread (`callback` lies in
// libunwind's code): calls `callback` once, for the loaded object containing the address libunwind
// looks for (or not at all when no object contains it), stores what it returned (0 if not called)
// in *result and returns true, all without the loader's lock. False for every other call: the
// caller forwards it to glibc.
using PhdrCallback = int (*)(dl_phdr_info*, size_t, void*);
bool AnswerUnwinderLookup(PhdrCallback callback, void* data, int* result);

}  // namespace StackCapture

}  // namespace heapgraph
