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
  uint32_t Generation() const { return generation_.load(std::memory_order_acquire); }
  // True with *rule when `address` has a rule of `generation`. Inline: the stack walk's per-frame
  // cost (a multiply, the loads of one slot, a compare). Relaxed loads suffice: a value is only
  // ever stored for its slot's key and carries everything it says (no other memory is published
  // with it); a reader that sees the key before its value reads 0 or an older generation: a miss.
  bool Find(uintptr_t address, uint32_t generation, UnwindRule* rule) const {
    if (slots_ == nullptr) return false;
    uint64_t expected = generation & kGenerationMask;
    for (uint32_t probe = 0, index = SlotOf(address); probe < kMaxProbes; ++probe, ++index) {
      const Slot& slot = slots_[index & kMask];
      uintptr_t key = slot.key.load(std::memory_order_relaxed);
      if (key == address) {
        // An unpublished 0 matches only generation 0 (after 2^24 Forgets) and unpacks as
        // kNotSimple: the caller takes libunwind's path, never a wrong rule.
        uint64_t value = slot.value.load(std::memory_order_relaxed);
        if ((value >> kGenerationShift) != expected) return false;
        *rule = Unpack(value);
        return true;
      }
      if (key == 0) return false;
    }
    return false;
  }
  void Store(uintptr_t address, uint32_t generation, const UnwindRule& rule);
  // Every stored rule is of the past from now on.
  void Forget();

 private:
  struct Slot {
    std::atomic<uintptr_t> key;
    std::atomic<uint64_t> value;
  };
  static constexpr uint32_t kMask = (1u << kSlotsLog2) - 1;
  // The packed value (0 = not published yet): bits 0-1 kind + 1, bit 2 cfa_from_rbp, bit 3
  // rbp_saved, bits 4-23 cfa_offset, bits 24-39 -rbp_offset, bits 40-63 the generation (24 bits;
  // after 2^24 dlcloses a rule of 2^24 generations ago would count as current again).
  static constexpr uint64_t kGenerationShift = 40;
  static constexpr uint64_t kGenerationMask = (uint64_t{1} << 24) - 1;

  static uint32_t SlotOf(uintptr_t address) {
    return static_cast<uint32_t>((address * 0x9e3779b97f4a7c15ull) >> (64 - kSlotsLog2));
  }
  static uint64_t Pack(const UnwindRule& rule, uint32_t generation);
  static UnwindRule Unpack(uint64_t value) {
    UnwindRule rule;
    rule.kind = static_cast<UnwindRule::Kind>((value & 3) - 1);  // 0 - 1: not kSimple nor kEnd
    rule.cfa_from_rbp = (value >> 2) & 1;
    rule.rbp_saved = (value >> 3) & 1;
    rule.cfa_offset = static_cast<uint32_t>((value >> 4) & EhFrameRules::kMaxCfaOffset);
    rule.rbp_offset = -static_cast<int32_t>((value >> 24) & EhFrameRules::kMaxRbpDepth);
    return rule;
  }

  Slot* slots_ = nullptr;
  std::atomic<uint32_t> generation_{1};
};

}  // namespace heapgraph
