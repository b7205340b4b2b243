#include "heap/runtime/UnwindRuleCache.h"

#include <sys/mman.h>

#include <atomic>

namespace heapgraph {

UnwindRuleCache::Packed UnwindRuleCache::Packed::Of(const UnwindRule& rule, uint32_t generation) {
  static_assert(EhFrameRules::kMaxSignalWord == 128, "three signal words of 7 bits");
  uint64_t bits = uint64_t{rule.kind} + 1;
  if (rule.kind == UnwindRule::kNotSimple) {
    bits |= uint64_t{rule.no_fde} << 2 | uint64_t{rule.signal_frame} << 3;
    for (int i = 0; rule.signal_frame && i < 3; ++i) {
      bits |= uint64_t{rule.signal_words[i] & kSignalWordMask} << (4 + 7 * i);
    }
  } else {
    bits |= uint64_t{rule.cfa_from_rbp} << 2 | uint64_t{rule.rbp_saved} << 3;
    bits |= uint64_t{rule.cfa_offset & EhFrameRules::kMaxCfaOffset} << 4;
    bits |= (uint64_t{static_cast<uint32_t>(-rule.rbp_offset)} & EhFrameRules::kMaxRbpDepth) << 24;
  }
  return Packed(bits | (uint64_t{generation} & kGenerationMask) << kGenerationShift);
}

UnwindRule UnwindRuleCache::Packed::Unpack() const {
  UnwindRule rule;
  rule.kind = simple() ? UnwindRule::kSimple : end() ? UnwindRule::kEnd : UnwindRule::kNotSimple;
  if (rule.kind == UnwindRule::kNotSimple) {
    rule.no_fde = no_fde();
    rule.signal_frame = signal_frame();
    for (int i = 0; rule.signal_frame && i < 3; ++i) {
      rule.signal_words[i] = static_cast<uint8_t>(signal_word(i));
    }
    return rule;
  }
  rule.cfa_from_rbp = cfa_from_rbp();
  rule.rbp_saved = rbp_saved();
  rule.cfa_offset = cfa_offset();
  rule.rbp_offset = -static_cast<int32_t>(rbp_depth());
  return rule;
}

bool UnwindRuleCache::Initialize() {
  size_t size = sizeof(Slot) * kTableSlots;
  void* table = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (table == MAP_FAILED) return false;
  slots_ = static_cast<Slot*>(table);
  return true;
}

template <uint32_t kStep>
UnwindRuleCache::Slot* UnwindRuleCache::Claim(uint32_t first, uintptr_t address) {
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe) {
    const uint32_t index = Probed<kStep>(first, probe);
    Slot& slot = slots_[index];
    // On a page never written the first access is the CAS, a write: the kernel maps a fresh page.
    const bool written = Written(index);
    uintptr_t key = written ? slot.key.load(std::memory_order_acquire) : 0;
    if (key == 0 && slot.key.compare_exchange_strong(key, address, std::memory_order_acq_rel)) {
      key = address;
    }
    if (!written) MarkWritten(index);
    if (key == address) return &slot;
  }
  return nullptr;
}

UnwindRuleCache::Packed UnwindRuleCache::Store(uintptr_t address, uint32_t generation,
                                               const UnwindRule& rule) {
  Packed packed = Packed::Of(rule, generation);
  if (slots_ == nullptr || address == 0) return packed;
  const uint32_t near = NearSlot(address);
  Slot* slot = Claim<kNearStep>(near, address);
  if (slot == nullptr) slot = Claim<kSpreadStep>(SpreadSlot(address, near), address);
  // Rules of one address and one generation are equal, so racing stores agree; a store of an
  // older generation that lands last only costs one more read of .eh_frame.
  if (slot != nullptr) slot->value.store(packed.bits(), std::memory_order_release);
  return packed;
}

bool UnwindRuleCache::FindSpilled(uintptr_t address, uint32_t near, uint32_t generation,
                                  Packed* rule) const {
  bool full = false;
  return FindAlong<kSpreadStep>(SpreadSlot(address, near), address, generation, rule, &full);
}

void UnwindRuleCache::MarkWritten(uint32_t index) {
  const uint32_t page = index >> kSlotsPerPageLog2;
  written_[page / 64].fetch_or(uint64_t{1} << (page % 64), std::memory_order_relaxed);
}

void UnwindRuleCache::Forget() {
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace heapgraph
