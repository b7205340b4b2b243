// heap/runtime/: the unwind rules of return addresses seen by StackCapture, in a lock-free
// open-addressed table of 2^kSlotsLog2 slots in its own anonymous mapping (never the host's
// malloc). A slot is {key: the address, value: the packed UnwindRule and the generation it was
// read in}. Find is wait-free (loads only); Store claims an empty slot with a CAS on its key, then
// publishes the value; a key, once claimed, never changes, so a reader never pairs one address
// with another's rule. A value of an older generation is never returned: Forget (after a dlclose)
// starts a new generation, and every address is read from .eh_frame again on its next use, so a
// rule of an unloaded module is never applied to code loaded later at the same address. When the
// probe sequence of an address is full, Store drops the rule (the caller reads it again next time).
// Safe in any thread, in signal handlers and in a forked child (no locks).
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/platform/EhFrameRules.h"

namespace heapgraph {

class UnwindRuleCache {
 public:
  static constexpr uint32_t kSlotsLog2 = 16;  // 1 MiB of address space, touched as filled
  static constexpr uint32_t kMaxProbes = 16;

  // Maps the table; false (and Find never hits) when mmap fails.
  bool Initialize();
  bool ready() const { return slots_ != nullptr; }

  // The current generation (read once per capture and passed to Find and Store).
  uint32_t Generation() const;
  // True with *rule when `address` has a rule of `generation`.
  bool Find(uintptr_t address, uint32_t generation, UnwindRule* rule) const;
  void Store(uintptr_t address, uint32_t generation, const UnwindRule& rule);
  // Every stored rule is of the past from now on.
  void Forget();

 private:
  struct Slot;
  Slot* slots_ = nullptr;
  std::atomic<uint32_t> generation_{1};
};

}  // namespace heapgraph
