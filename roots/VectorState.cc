#include "roots/VectorState.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/auxv.h>
#endif

namespace heapgraph::roots {
namespace {

#if defined(__x86_64__)
constexpr size_t kLegacySize = 512;
constexpr size_t kHeaderOffset = 512;
constexpr size_t kHeaderSize = 64;
constexpr size_t kSt0Offset = 32;
constexpr size_t kXmm0Offset = 160;
constexpr size_t kMaxComponents = 19;  // XSAVE components enumerated by CPUID leaf 0xD

// CPUID results, read on first use: CPUID can trap to a hypervisor (≈ 9-20 µs each in a VM),
// and the signal fallback consults the layout in every suspended thread's handler. Only the
// components the kernel enabled (XCR0, read with XGETBV, which does not trap) are asked for: the
// others never appear in a thread's state. Nothing asks for them when no thread but the caller is
// captured (the caller keeps no vector state): a small program's at-exit check then executes no
// CPUID at all (CaptureSize takes the kernel's bound instead).
struct XsaveTable {
  bool has_xsave = false;
  uint32_t enabled_size = 0;  // CPUID(0xD, 0).EBX
  VectorState::Component components[kMaxComponents];
};

XsaveTable ReadXsaveTable() {
  XsaveTable table;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || (c & bit_OSXSAVE) == 0) return table;
  if (__get_cpuid_max(0, nullptr) < 0xD) return table;
  table.has_xsave = true;
  __cpuid_count(0xD, 0, a, b, c, d);
  table.enabled_size = b;
  unsigned xcr0_low = 0, xcr0_high = 0;
  asm volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  const uint64_t enabled = (uint64_t{xcr0_high} << 32) | xcr0_low;
  for (unsigned i = 2; i < kMaxComponents; ++i) {
    if ((enabled & (uint64_t{1} << i)) == 0) continue;
    __cpuid_count(0xD, i, a, b, c, d);
    table.components[i] = VectorState::Component{b, a};
  }
  return table;
}

// Published once, without a guard variable or a lock that could block or spin: usable in the
// ptrace helper task and in signal handlers. A caller that finds it unpublished reads CPUID itself
// and uses its own reading; the first to finish also publishes it (every reading is the same).
constinit XsaveTable g_table;
constinit std::atomic<int> g_table_state{0};  // 0 unread, 1 being published, 2 published

XsaveTable Table() {
  if (g_table_state.load(std::memory_order_acquire) == 2) return g_table;
  const XsaveTable table = ReadXsaveTable();
  int expected = 0;
  if (g_table_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    g_table = table;
    g_table_state.store(2, std::memory_order_release);
  }
  return table;
}
#endif

}  // namespace

uint64_t VectorState::PresentComponents() const {
#if defined(__x86_64__)
  if (raw_.size() < kLegacySize) return 0;
  if (raw_.size() < kHeaderOffset + kHeaderSize) return 0b11;
  uint64_t xstate_bv = 0;
  std::memcpy(&xstate_bv, raw_.data() + kHeaderOffset, sizeof(xstate_bv));
  return xstate_bv;
#else
  return raw_.size() >= 32 * 16 ? 1 : 0;
#endif
}

std::span<const uint8_t> VectorState::Xmm(int index) const {
#if defined(__x86_64__)
  if (index < 0 || index >= 16 || raw_.size() < kLegacySize) return {};
  return raw_.subspan(kXmm0Offset + 16 * static_cast<size_t>(index), 16);
#else
  if (index < 0 || index >= 32 || raw_.size() < 32 * 16) return {};
  return raw_.subspan(16 * static_cast<size_t>(index), 16);
#endif
}

std::span<const uint8_t> VectorState::YmmUpper(int index) const {
  if (index < 0 || index >= 16) return {};
  return ComponentSlice(kAvx, index, 16);
}

std::span<const uint8_t> VectorState::Opmask(int index) const {
  if (index < 0 || index >= 8) return {};
  return ComponentSlice(kOpmask, index, 8);
}

std::span<const uint8_t> VectorState::ZmmUpper(int index) const {
  if (index < 0 || index >= 16) return {};
  return ComponentSlice(kZmmHi256, index, 32);
}

std::span<const uint8_t> VectorState::HighZmm(int index) const {
  if (index < 16 || index >= 32) return {};
  return ComponentSlice(kHi16Zmm, index - 16, 64);
}

std::span<const uint8_t> VectorState::ComponentSlice(int feature, int index,
                                                     uint32_t stride) const {
  if ((PresentComponents() & (uint64_t{1} << feature)) == 0) return {};
  const Component c = Layout(feature);
  const size_t begin = c.offset + static_cast<size_t>(index) * stride;
  if (c.size == 0 || begin + stride > raw_.size()) return {};
  return raw_.subspan(begin, stride);
}

bool VectorState::ContainsWord(uint64_t value) const {
  for (size_t i = 0; i + sizeof(uint64_t) <= raw_.size(); i += sizeof(uint64_t)) {
    uint64_t word = 0;
    std::memcpy(&word, raw_.data() + i, sizeof(word));
    if (word == value) return true;
  }
  return false;
}

VectorState::Component VectorState::Layout(int feature) {
#if defined(__x86_64__)
  if (feature < 2 || feature >= static_cast<int>(kMaxComponents)) return {};
  return Table().components[feature];
#else
  (void)feature;
  return {};
#endif
}

void VectorState::LoadLayout() {
#if defined(__x86_64__)
  Table();
#endif
}

size_t VectorState::CaptureSize() {
#if defined(__x86_64__)
  // The kernel's bound first (no CPUID): the user XSAVE area is part of every signal frame.
  const unsigned long signal_frame = getauxval(AT_MINSIGSTKSZ);
  if (signal_frame >= kHeaderOffset + kHeaderSize) return (signal_frame + 63) & ~size_t{63};
  const XsaveTable table = Table();
  if (!table.has_xsave) return kLegacySize;
  const size_t enabled_size = table.enabled_size;
  const size_t size = enabled_size < kHeaderOffset + kHeaderSize ? kLegacySize : enabled_size;
  return (size + 63) & ~size_t{63};
#else
  return 32 * 16 + 16;  // struct user_fpsimd_state: vregs, fpsr, fpcr, padding
#endif
}

void VectorState::ZeroAbsentComponents(std::span<uint8_t> raw) {
#if defined(__x86_64__)
  const uint64_t present = VectorState(raw).PresentComponents();
  if (raw.size() < kHeaderOffset + kHeaderSize) return;  // legacy-only: FXSAVE writes it all
  if ((present & (1u << kX87)) == 0) std::memset(raw.data() + kSt0Offset, 0, 8 * 16);
  if ((present & (1u << kSse)) == 0) std::memset(raw.data() + kXmm0Offset, 0, 16 * 16);
  for (int feature = 2; feature < static_cast<int>(kMaxComponents); ++feature) {
    if ((present & (uint64_t{1} << feature)) != 0) continue;
    const Component c = Layout(feature);
    if (c.size == 0 || c.offset < kHeaderOffset + kHeaderSize) continue;
    if (c.offset >= raw.size()) continue;
    const size_t size = c.offset + c.size > raw.size() ? raw.size() - c.offset : c.size;
    std::memset(raw.data() + c.offset, 0, size);
  }
#else
  (void)raw;
#endif
}

}  // namespace heapgraph::roots
