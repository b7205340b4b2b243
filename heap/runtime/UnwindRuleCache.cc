#include "heap/runtime/UnwindRuleCache.h"

#include <sys/mman.h>

#include <atomic>

namespace heapgraph {

uint64_t UnwindRuleCache::Pack(const UnwindRule& rule, uint32_t generation) {
  uint64_t value = uint64_t{rule.kind} + 1;
  value |= uint64_t{rule.cfa_from_rbp} << 2;
  value |= uint64_t{rule.rbp_saved} << 3;
  value |= uint64_t{rule.cfa_offset & EhFrameRules::kMaxCfaOffset} << 4;
  value |= (uint64_t{static_cast<uint32_t>(-rule.rbp_offset)} & EhFrameRules::kMaxRbpDepth) << 24;
  return value | (uint64_t{generation} & kGenerationMask) << kGenerationShift;
}

bool UnwindRuleCache::Initialize() {
  size_t size = sizeof(Slot) << kSlotsLog2;
  void* table = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (table == MAP_FAILED) return false;
  slots_ = static_cast<Slot*>(table);
  return true;
}

void UnwindRuleCache::Store(uintptr_t address, uint32_t generation, const UnwindRule& rule) {
  if (slots_ == nullptr || address == 0) return;
  for (uint32_t probe = 0, index = SlotOf(address); probe < kMaxProbes; ++probe, ++index) {
    Slot& slot = slots_[index & kMask];
    uintptr_t key = slot.key.load(std::memory_order_acquire);
    if (key == 0 && slot.key.compare_exchange_strong(key, address, std::memory_order_acq_rel)) {
      key = address;
    }
    if (key != address) continue;
    // Rules of one address and one generation are equal, so racing stores agree; a store of an
    // older generation that lands last only costs one more read of .eh_frame.
    slot.value.store(Pack(rule, generation), std::memory_order_release);
    return;
  }
}

void UnwindRuleCache::Forget() {
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace heapgraph
