// heap/runtime/: what a forked child had to look up that its parent could have handed it, reported
// back to the process that forked it, which looks it up itself before its next fork so that the
// next child inherits the answer in its copy-on-write memory. A shell running a command forks a
// child that allocates on paths its parent never runs (bash's make_child, its redirections) and
// then calls exec: every such child read the same unwind rules from .eh_frame again
// (UnwindRuleCache misses) and walked the same stacks through the shared stack table (misses of
// its thread's stack cache), faulting in the same pages of both (a fork copies no page table
// entry of a shared or read-only file mapping), and lost it all at its exec.
// Two kinds of hint, each one word: a return address whose rule the child read (kRule), and the
// id of a stack the child interned past its stack cache (kStack). They are hints only: the parent
// reads every rule from its own loaded objects and every stack's frames from the stack table it
// shares with the child (StackCapture::LearnRule, the recorder's stack cache), so a child's rule,
// a child's module at an address, or a torn or stale hint is never trusted; a wrong hint costs one
// lookup.
// One page shared by the process and every child it forks (MAP_SHARED | MAP_ANONYMOUS, mapped
// by the first fork's prepare handler: a process that never forks maps nothing): a ring of kRing
// words behind a counter. A child claims a place with one atomic add and stores the word; a reader
// takes what was stored since its own last read (the newest kRing at most; a place claimed but not
// stored yet reads as whatever it held: a hint lost). Wait-free, no locks, no allocation: usable in
// the hooks, in signal handlers and in a child between fork and exec. Libc only.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapgraph {

class ForkChildHints {
 public:
  static constexpr uint32_t kRing = 511;  // with the counter, one page
  enum Kind : uint64_t { kRule = 1, kStack = 2 };

  // Maps the shared page unless it is mapped already; false (nothing is reported or drained) when
  // mmap fails. A leak scan never takes shared memory for roots, so the page (code addresses and
  // stack ids) needs no UnwinderMappings entry.
  bool Initialize();

  // A forked child reports from StartReporting() until StopReporting() (it wrote a recording of
  // its own: it lives on, and its paths are no longer its parent's concern).
  void StartReporting() { reporting_ = page_ != nullptr; }
  void StopReporting() { reporting_ = false; }
  bool reporting() const { return reporting_; }
  // `value`: a user-space code address (kRule) or a stack id (kStack); both fit in 62 bits.
  void Report(Kind kind, uint64_t value) {
    const uint64_t place = page_->next.fetch_add(1, std::memory_order_relaxed);
    page_->ring[place % kRing].store(kind << kKindShift | value, std::memory_order_release);
  }
  // Places claimed so far by every reporter (tests: a child that looked up nothing claims none).
  uint64_t reported() const {
    return page_ == nullptr ? 0 : page_->next.load(std::memory_order_acquire);
  }

  // Calls learn(kind, value) for every hint reported since this process's last Drain (the newest
  // kRing of them).
  template <typename Learn>
  void Drain(Learn learn) {
    if (page_ == nullptr) return;
    const uint64_t end = page_->next.load(std::memory_order_acquire);
    uint64_t place = end - read_ > kRing ? end - kRing : read_;
    read_ = end;
    for (; place < end; ++place) {
      const uint64_t word = page_->ring[place % kRing].load(std::memory_order_acquire);
      const uint64_t kind = word >> kKindShift, value = word & kValueMask;
      if ((kind == kRule || kind == kStack) && value != 0) learn(static_cast<Kind>(kind), value);
    }
  }

 private:
  static constexpr uint64_t kKindShift = 62;
  static constexpr uint64_t kValueMask = (uint64_t{1} << kKindShift) - 1;
  struct Page {
    std::atomic<uint64_t> next;
    std::atomic<uint64_t> ring[kRing];
  };
  static_assert(sizeof(Page) == 4096);

  Page* page_ = nullptr;
  uint64_t read_ = 0;  // this process's own: the places it has read (a child inherits it)
  bool reporting_ = false;
};

}  // namespace heapgraph
