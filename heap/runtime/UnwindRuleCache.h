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
// Pages: a page of the table is read only once a Store has written it (one bit a page). A read of a
// never-written page of an anonymous mapping maps the zero page, and the write that follows then
// copies it and flushes the TLBs of every core the process runs on (an IPI while another thread
// runs): in a short program (`cmake --version`, ~250 pages filled) that was ~7 % of its CPU. And
// an address's probe sequence starts in the page of its code region (NearSlot), so that the few
// dozen addresses of a short program fill a few pages, not one each; only when those kMaxProbes
// slots all hold other addresses does it go elsewhere (SpreadSlot: one slot in each of kMaxProbes
// pages, so that a region's full page blocks one probe at most): a key, once claimed, never
// changes, so a full near sequence stays full and a Find that meets an empty slot there knows the
// address is nowhere else.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/platform/EhFrameRules.h"

namespace heapgraph {

class UnwindRuleCache {
 public:
  static constexpr uint32_t kSlotsLog2 = 16;  // 1 MiB of address space, touched as filled
  static constexpr uint32_t kMaxProbes = 16;

  // A rule as a slot holds it: one word with its generation, decoded field by field where the
  // walk needs a field (bits 0-1 kind + 1, 0 = not published; bits 40-63 the generation, 24 bits:
  // after 2^24 Forgets a rule of 2^24 generations ago would count as current again). kSimple and
  // kEnd: bit 2 cfa_from_rbp, bit 3 rbp_saved, bits 4-23 cfa_offset, bits 24-39 -rbp_offset.
  // kNotSimple: bit 2 no_fde, bit 3 signal_frame, bits 4-24 its three signal_words, 7 bits each.
  class Packed {
   public:
    explicit Packed(uint64_t bits = 0) : bits_(bits) {}
    static Packed Of(const UnwindRule& rule, uint32_t generation);
    bool simple() const { return (bits_ & 3) == UnwindRule::kSimple + 1; }
    bool end() const { return (bits_ & 3) == UnwindRule::kEnd + 1; }
    bool cfa_from_rbp() const { return (bits_ & 4) != 0; }
    bool no_fde() const { return (bits_ & 7) == ((UnwindRule::kNotSimple + 1) | 4); }
    bool signal_frame() const { return (bits_ & 15) == ((UnwindRule::kNotSimple + 1) | 8); }
    // The word above a signal frame's rsp holding the interrupted frame's rip (0), rsp (1), rbp
    // (2).
    uint32_t signal_word(int i) const { return (bits_ >> (4 + 7 * i)) & kSignalWordMask; }
    bool rbp_saved() const { return (bits_ & 8) != 0; }
    uint32_t cfa_offset() const { return (bits_ >> 4) & EhFrameRules::kMaxCfaOffset; }
    uint32_t rbp_depth() const { return (bits_ >> 24) & EhFrameRules::kMaxRbpDepth; }
    uint64_t generation() const { return bits_ >> kGenerationShift; }
    uint64_t bits() const { return bits_; }
    UnwindRule Unpack() const;

   private:
    static constexpr uint32_t kSignalWordMask = EhFrameRules::kMaxSignalWord - 1;
    uint64_t bits_;
  };

  // Maps the table; false (and Find never hits) when mmap fails.
  bool Initialize();
  bool ready() const { return slots_ != nullptr; }
  // The table's mapping (unwind data only, never a pointer of the program's): empty before
  // Initialize.
  uintptr_t begin() const { return reinterpret_cast<uintptr_t>(slots_); }
  uintptr_t end() const { return slots_ == nullptr ? 0 : begin() + sizeof(Slot) * kTableSlots; }

  // The current generation (read once per capture and passed to Find and Store).
  uint32_t Generation() const { return generation_.load(std::memory_order_acquire); }
  // True with *rule when `address` has a rule of `generation`. Inline: the stack walk's per-frame
  // cost (a multiply, the loads of one slot, a compare). Relaxed loads suffice: a value is only
  // ever stored for its slot's key and carries everything it says (no other memory is published
  // with it); a reader that sees the key before its value reads 0 or an older generation: a miss.
  bool Find(uintptr_t address, uint32_t generation, Packed* rule) const {
    if (slots_ == nullptr) return false;
    const uint32_t near = NearSlot(address);
    bool full = false;
    if (FindAlong<kNearStep>(near, address, generation, rule, &full)) return true;
    return full && FindSpilled(address, near, generation, rule);
  }
  // Keeps `rule` for `address` (dropped when its probe sequence is full); returns it packed.
  Packed Store(uintptr_t address, uint32_t generation, const UnwindRule& rule);
  // Every stored rule is of the past from now on.
  void Forget();

 private:
  struct Slot {
    std::atomic<uintptr_t> key;
    std::atomic<uint64_t> value;
  };
  static constexpr uint32_t kMask = (1u << kSlotsLog2) - 1;
  static constexpr uint64_t kGenerationShift = 40;
  static constexpr uint64_t kGenerationMask = (uint64_t{1} << 24) - 1;

  static constexpr uint32_t kSlotsPerPageLog2 = 8;  // 4 KiB of 16-byte slots
  static constexpr uint32_t kPages = (1u << kSlotsLog2) >> kSlotsPerPageLog2;
  // The near sequences of the last page run on past it (kMaxProbes - 1 slots at most): no wrap, no
  // mask on the walk's path.
  static constexpr uint32_t kTableSlots = (1u << kSlotsLog2) + kMaxProbes;
  // A code region of 16 KiB has its page of the table (2^kRegionLog2 bytes of code to 256 slots):
  // the return addresses of one function or its neighbours share a page, so a short program
  // touches a page per region it runs instead of one per address (docs/performance.md, session
  // 28). Larger regions fill their page in dense code and spill more.
  static constexpr uint32_t kRegionLog2 = 14;

  // Relaxed: a bit seen late only makes a miss, and a slot's own loads order what it holds.
  bool Written(uint32_t index) const {
    const uint32_t page = index >> kSlotsPerPageLog2;
    return (written_[page / 64].load(std::memory_order_relaxed) >> (page % 64) & 1) != 0;
  }
  void MarkWritten(uint32_t index);

  // Where an address's probe sequence starts: in the page of its code region (regions 4 MiB apart
  // share one), at a slot of that page by a hash of the address. No second multiply: the walk
  // pays this once a frame, one after the other.
  static uint32_t NearSlot(uintptr_t address) {
    const uint32_t page_bits = static_cast<uint32_t>(address >> (kRegionLog2 - kSlotsPerPageLog2)) &
                               ((kPages - 1) << kSlotsPerPageLog2);
    const uint32_t slot =
        static_cast<uint32_t>((address * 0x9e3779b97f4a7c15ull) >> (64 - kSlotsPerPageLog2));
    return page_bits | slot;
  }
  // Anywhere but `near`'s page, which is full when the spill is needed (half the table away); its
  // probes step from page to page (a region's full page blocks one of them at most).
  static constexpr uint32_t kNearStep = 1, kSpreadStep = (1u << kSlotsPerPageLog2) + 1;
  static uint32_t SpreadSlot(uintptr_t address, uint32_t near) {
    const uint32_t spread =
        static_cast<uint32_t>((address * 0xc2b2ae3d27d4eb4full) >> (64 - kSlotsLog2));
    const bool same_page = ((spread ^ near) >> kSlotsPerPageLog2) == 0;
    return same_page ? spread ^ (1u << (kSlotsLog2 - 1)) : spread;
  }

  // *rule from `slot` when it is of `generation`. An unpublished 0 matches only generation 0
  // (after 2^24 Forgets) and is neither simple() nor end() nor no_fde(): the caller takes the
  // complete walk, never a wrong rule.
  static bool Current(const Slot& slot, uint32_t generation, Packed* rule) {
    Packed value(slot.value.load(std::memory_order_relaxed));
    if (value.generation() != (generation & kGenerationMask)) return false;
    *rule = value;
    return true;
  }
  // Find along the probe sequence from `first` by kStep; *full when its kMaxProbes slots all hold
  // other addresses (an empty one means the address is in no slot).
  template <uint32_t kStep>
  bool FindAlong(uint32_t first, uintptr_t address, uint32_t generation, Packed* rule,
                 bool* full) const {
    for (uint32_t probe = 0; probe < kMaxProbes; ++probe) {
      const uint32_t index = Probed<kStep>(first, probe);
      if (!Written(index)) return false;  // every key there is still 0
      const Slot& slot = slots_[index];
      uintptr_t key = slot.key.load(std::memory_order_relaxed);
      if (key == address) return Current(slot, generation, rule);
      if (key == 0) return false;
    }
    *full = true;
    return false;
  }
  // Find along the spilled sequence (out of line: Find, inline in the walk, stays small).
  bool FindSpilled(uintptr_t address, uint32_t near, uint32_t generation, Packed* rule) const;
  // The slot of `address` in the sequence from `first` by kStep (Find's), claimed if need be;
  // null when it is full.
  template <uint32_t kStep>
  Slot* Claim(uint32_t first, uintptr_t address);
  // The probe-th slot of the sequence from `first` by kStep: a near sequence runs on into the
  // table's tail, a spilled one wraps around.
  template <uint32_t kStep>
  static uint32_t Probed(uint32_t first, uint32_t probe) {
    return kStep == kNearStep ? first + probe : (first + probe * kStep) & kMask;
  }

  Slot* slots_ = nullptr;
  std::atomic<uint32_t> generation_{1};
  std::atomic<uint64_t> written_[kPages / 64 + 1] = {};  // bit p: page p of slots_ was written
};

}  // namespace heapgraph
