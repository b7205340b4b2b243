#include "heap/runtime/UnwindRuleCache.h"

#include <sys/mman.h>

#include <atomic>

namespace heapgraph {
namespace {

// The packed value: 0 = not published yet.
//   bits 0-1 kind + 1 (1..3), bit 2 cfa_from_rbp, bit 3 rbp_saved,
//   bits 4-23 cfa_offset, bits 24-39 -rbp_offset, bits 40-63 the generation (24 bits; after
//   2^24 dlcloses a rule of 2^24 generations ago would count as current again).
constexpr uint64_t kGenerationShift = 40;
constexpr uint64_t kGenerationMask = (uint64_t{1} << 24) - 1;

uint64_t Pack(const UnwindRule& rule, uint32_t generation) {
  uint64_t value = uint64_t{rule.kind} + 1;
  value |= uint64_t{rule.cfa_from_rbp} << 2;
  value |= uint64_t{rule.rbp_saved} << 3;
  value |= uint64_t{rule.cfa_offset & EhFrameRules::kMaxCfaOffset} << 4;
  value |= (uint64_t{static_cast<uint32_t>(-rule.rbp_offset)} & EhFrameRules::kMaxRbpDepth) << 24;
  return value | (uint64_t{generation} & kGenerationMask) << kGenerationShift;
}

UnwindRule Unpack(uint64_t value) {
  UnwindRule rule;
  rule.kind = static_cast<UnwindRule::Kind>((value & 3) - 1);
  rule.cfa_from_rbp = (value >> 2) & 1;
  rule.rbp_saved = (value >> 3) & 1;
  rule.cfa_offset = static_cast<uint32_t>((value >> 4) & EhFrameRules::kMaxCfaOffset);
  rule.rbp_offset = -static_cast<int32_t>((value >> 24) & EhFrameRules::kMaxRbpDepth);
  return rule;
}

uint32_t SlotOf(uintptr_t address) {
  return static_cast<uint32_t>((address * 0x9e3779b97f4a7c15ull) >>
                               (64 - UnwindRuleCache::kSlotsLog2));
}

}  // namespace

struct UnwindRuleCache::Slot {
  std::atomic<uintptr_t> key;
  std::atomic<uint64_t> value;
};

bool UnwindRuleCache::Initialize() {
  size_t size = sizeof(Slot) << kSlotsLog2;
  void* table = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (table == MAP_FAILED) return false;
  slots_ = static_cast<Slot*>(table);
  return true;
}

uint32_t UnwindRuleCache::Generation() const {
  return generation_.load(std::memory_order_acquire);
}

bool UnwindRuleCache::Find(uintptr_t address, uint32_t generation, UnwindRule* rule) const {
  if (slots_ == nullptr) return false;
  uint32_t mask = (1u << kSlotsLog2) - 1;
  uint32_t index = SlotOf(address);
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe) {
    const Slot& slot = slots_[(index + probe) & mask];
    uintptr_t key = slot.key.load(std::memory_order_acquire);
    if (key == 0) return false;
    if (key != address) continue;
    uint64_t value = slot.value.load(std::memory_order_acquire);
    if (value == 0 || (value >> kGenerationShift) != (generation & kGenerationMask)) return false;
    *rule = Unpack(value);
    return true;
  }
  return false;
}

void UnwindRuleCache::Store(uintptr_t address, uint32_t generation, const UnwindRule& rule) {
  if (slots_ == nullptr || address == 0) return;
  uint32_t mask = (1u << kSlotsLog2) - 1;
  uint32_t index = SlotOf(address);
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe) {
    Slot& slot = slots_[(index + probe) & mask];
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
