// heap/runtime/: a thread's memo of its last stack walk by rules (StackCapture), so that a walk
// reaching a frame the last walk also passed copies the rest instead of stepping it frame by frame
// (each step is one dependent chain of loads: return address, rule, CFA, next return address).
// A frame is its state (return address, stack pointer, rbp) and the rbp slot its step read; the
// next state follows from the state, the rule of its return address (the same within one
// UnwindRuleCache generation) and the two words the step read. So when a walk's state equals the
// memo's frame m, and every word the memo's steps from m on read still holds what they read (the
// return-address slot below each CFA, each saved-rbp slot: independent loads, not a chain), the
// memo's frames after m are the frames the walk would find.
// Invariants: the memo holds only walks of the current thread that succeeded, of one generation;
// every word it re-reads was read by such a walk and lies in the proven part of the thread's own
// stack (HomeStack: never unmapped while the thread lives; a coroutine's or alternate signal
// stack's walk is never kept) and at or above the walk's current stack pointer. A walk that enters
// while another is in progress on the thread (a signal handler) neither reads nor writes the memo.
// Zero-initialized: empty. No allocation, no lock; per thread (the recorder's initial-exec TLS).
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/runtime/HomeStack.h"

namespace heapgraph {

class WalkMemo {
 public:
  static constexpr int kMaxFrames = 68;  // the deepest capture (64) and heapgraph's own frames
  struct Frame {
    uintptr_t ip;
    uintptr_t sp;
    uintptr_t fp;
    uintptr_t rbp_slot;  // where the step to the next frame read rbp; 0: rbp unchanged
  };

  // False (the walk goes without the memo) when a walk on this thread is already in progress.
  bool Enter() {
    if (busy_) return false;
    busy_ = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return true;
  }
  void Leave() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    busy_ = false;
  }

  // Whether a walk cut at its size may climb on to the outermost frame to prove its stack (a
  // full walk of the rest): after a climb that proved nothing the thread waits 2, 4, ... up to
  // kMaxClimbWait walks before the next (coroutine stacks, JIT frames never prove anything).
  bool MayClimb() {
    if (climb_wait_ == 0) return true;
    --climb_wait_;
    return false;
  }
  static constexpr uint32_t kMaxClimbWait = 1024;

  class Pass;

 private:
  Frame frames_[2][kMaxFrames];
  HomeStack home_;
  uint32_t climb_wait_;     // walks left before the next climb
  uint32_t climb_backoff_;  // the wait after the next climb that proves nothing
  uint32_t generation_;     // 0: empty (UnwindRuleCache generations start at 1)
  int count_;
  int current_;
  bool busy_;
};

// One walk's use of the memo (between Enter and Leave): reads the last walk, records this one in
// the other buffer, and keeps it (Commit) if it succeeded on the thread's own stack.
class WalkMemo::Pass {
 public:
  Pass(WalkMemo& memo, uint32_t generation)
      : memo_(memo),
        prev_(memo.frames_[memo.current_]),
        next_(memo.frames_[memo.current_ ^ 1]),
        prev_count_(memo.generation_ == generation ? memo.count_ : 0),
        generation_(generation) {}

  void Record(int n, uintptr_t ip, uintptr_t sp, uintptr_t fp) { next_[n] = {ip, sp, fp, 0}; }
  void RecordRbpSlot(int n, uintptr_t slot) { next_[n].rbp_slot = slot; }

  // The walk is at frame n (state ip, sp, fp; not recorded yet) with room for `room` frames: when
  // the last walk passed the same state and the words it read above still hold the same values,
  // stores the return addresses of the frames it can take (at most room - 1) in out[n...], moves
  // the state to the first frame after them and returns their count; else 0. At most once a walk.
  int Reuse(int n, int room, uintptr_t limit, uintptr_t* ip, uintptr_t* sp, uintptr_t* fp,
            uintptr_t* out) {
    while (cursor_ < prev_count_ && prev_[cursor_].sp < *sp) ++cursor_;
    if (cursor_ >= prev_count_) return 0;
    const Frame& frame = prev_[cursor_];
    if (frame.sp != *sp || frame.ip != *ip || frame.fp != *fp) return 0;
    return Splice(n, room, limit, ip, sp, fp, out);
  }

  // The last frame of a walk of `count` frames (always recorded, never spliced).
  const Frame& Last(int count) const { return next_[count - 1]; }
  // True when [start_sp, last_sp] lies in the proven part of the thread's own stack.
  bool Covered(uintptr_t start_sp, uintptr_t last_sp) const {
    return memo_.home_.Covers(start_sp, last_sp);
  }
  // The walk succeeded with `count` frames, from stack pointer `start_sp`; `end_sp`: the stack
  // pointer of its outermost frame when the walk or a climb reached it, else 0. Keeps the walk
  // when it lies in the proven part of the thread's own stack.
  void Commit(int count, uintptr_t start_sp, uintptr_t end_sp, const void* anchor);

 private:
  int Splice(int n, int room, uintptr_t limit, uintptr_t* ip, uintptr_t* sp, uintptr_t* fp,
             uintptr_t* out);
  // A walk that could not be kept: the next climb waits longer.
  void NoteUnproven();
  // True when the words read by the steps from frames[0] to frames[steps] are unchanged.
  static bool Unchanged(const Frame* frames, int steps);

  WalkMemo& memo_;
  Frame* prev_;
  Frame* next_;
  int prev_count_;
  uint32_t generation_;
  int cursor_ = 0;
  // Frames [shared_begin_, shared_end_) of this walk are the last walk's at the same indices.
  int shared_begin_ = 0;
  int shared_end_ = 0;
};

}  // namespace heapgraph
