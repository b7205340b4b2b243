#include "heap/runtime/WalkMemo.h"

#include <cstring>

namespace heapgraph {

bool WalkMemo::Pass::Unchanged(const Frame* frames, int steps) {
  uintptr_t changed = 0;
  for (int k = 0; k < steps; ++k) {
    const Frame& to = frames[k + 1];
    changed |= *reinterpret_cast<const volatile uintptr_t*>(to.sp - sizeof(uintptr_t)) ^ to.ip;
    uintptr_t slot = frames[k].rbp_slot;
    if (slot != 0) changed |= *reinterpret_cast<const volatile uintptr_t*>(slot) ^ to.fp;
  }
  return changed == 0;
}

void WalkMemo::Pass::NoteUnproven() {
  uint32_t backoff = memo_.climb_backoff_;
  backoff = backoff == 0 ? 2 : (backoff >= kMaxClimbWait ? kMaxClimbWait : backoff * 2);
  memo_.climb_backoff_ = backoff;
  if (memo_.climb_wait_ == 0) memo_.climb_wait_ = backoff;
}

int WalkMemo::Pass::Splice(int n, int room, uintptr_t limit, uintptr_t* ip, uintptr_t* sp,
                           uintptr_t* fp, uintptr_t* out) {
  int m = cursor_;
  int count = prev_count_ - 1 - m;
  if (count > room - 1) count = room - 1;
  prev_count_ = 0;  // one splice a walk: it reaches the memo's last frame or the walk's
  if (count <= 0 || prev_[m + count].sp > limit || !Unchanged(prev_ + m, count)) return 0;
  for (int i = 0; i < count; ++i) out[n + i] = prev_[m + i].ip;
  if (n == m) {
    shared_begin_ = n;
    shared_end_ = n + count;
  } else {
    memcpy(next_ + n, prev_ + m, count * sizeof(Frame));
  }
  const Frame& resume = prev_[m + count];
  *ip = resume.ip;
  *sp = resume.sp;
  *fp = resume.fp;
  return count;
}

void WalkMemo::Pass::Commit(int count, uintptr_t start_sp, uintptr_t end_sp, const void* anchor) {
  uintptr_t last_sp = Last(count).sp;
  if (end_sp != 0) memo_.home_.Prove(start_sp, end_sp, anchor);
  if (!memo_.home_.Covers(start_sp, last_sp)) {
    memo_.count_ = 0;
    NoteUnproven();
    return;
  }
  memo_.climb_backoff_ = 0;
  if (shared_end_ != 0) {  // the shared frames stay where they are; the others join them
    memcpy(prev_, next_, shared_begin_ * sizeof(Frame));
    memcpy(prev_ + shared_end_, next_ + shared_end_, (count - shared_end_) * sizeof(Frame));
  } else {
    memo_.current_ ^= 1;
  }
  memo_.count_ = count;
  memo_.generation_ = generation_;
}

}  // namespace heapgraph
