// roots/: a read-only view of one thread's raw vector register bytes (ThreadInfo::vector_bytes),
// plus the layout facts needed to capture and normalize them.
//
// x86-64: the XSAVE standard (non-compacted) format, which both PTRACE_GETREGSET NT_X86_XSTATE
// and signal frames use: legacy region [0, 512) with st0-7 at 32 and xmm0-15 at 160 (16 bytes
// each), the XSAVE header at 512 whose first 8 bytes are XSTATE_BV (bit i set = component i is
// not in its initial state), and extended components at the offsets CPUID(0xD, i).EBX gives:
// 2 = AVX (upper 128 bits of ymm0-15), 5 = opmask k0-7, 6 = ZMM_Hi256 (upper 256 bits of
// zmm0-15), 7 = Hi16_ZMM (all of zmm16-31). A component whose bit is clear reads as absent.
// A 512-byte buffer (NT_PRFPREG / FXSAVE only) has xmm0-15 and nothing else.
//
// aarch64: struct user_fpsimd_state: v0-v31 (16 bytes each) at 0, then fpsr, fpcr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace heapgraph::roots {

class VectorState {
 public:
  explicit VectorState(std::span<const uint8_t> raw) : raw_(raw) {}

  // XSTATE_BV from the header; 0b11 (x87+SSE) for a legacy-only buffer; 0 if too short.
  uint64_t PresentComponents() const;

  // Each returns the register's bytes, or an empty span when the state is absent.
  std::span<const uint8_t> Xmm(int index) const;       // x86: xmm0-15, aarch64: v0-31 (16 B)
  std::span<const uint8_t> YmmUpper(int index) const;  // bits 128..255 of ymm0-15 (16 B)
  std::span<const uint8_t> Opmask(int index) const;    // k0-7 (8 B)
  std::span<const uint8_t> ZmmUpper(int index) const;  // bits 256..511 of zmm0-15 (32 B)
  std::span<const uint8_t> HighZmm(int index) const;   // zmm16-31 in full (64 B), index 16..31

  // True if any naturally aligned 8-byte word of the raw bytes equals `value`.
  bool ContainsWord(uint64_t value) const;

  // A buffer size that holds a thread's XSAVE area, rounded up to 64. x86-64: the kernel's
  // AT_MINSIGSTKSZ (Linux 5.14 and later: a signal frame's size, which includes the whole user
  // XSAVE area; no CPUID, which traps to the hypervisor in a VM), else the size for the features
  // the OS enabled in XCR0 (CPUID(0xD,0).EBX), 512 when XSAVE is unavailable. On aarch64 the size
  // of user_fpsimd_state. Call it before stopping the world or installing a signal handler.
  static size_t CaptureSize();
  // Reads the XSAVE layout (CPUID, once per process) so that Layout and ZeroAbsentComponents
  // execute none later: call it before the world is stopped or a handler may need the layout.
  // Layout reads it on first use anyway, without a lock (safe in the helper and in handlers).
  static void LoadLayout();
  // Standard-format offset and size of XSAVE component `feature` (0 size: not supported).
  struct Component {
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  static Component Layout(int feature);
  // Zeroes the bytes of every component whose XSTATE_BV bit is clear, so that no stale memory
  // (a signal frame's or an uninitialized buffer's) is mistaken for register contents.
  static void ZeroAbsentComponents(std::span<uint8_t> raw);

  static constexpr int kX87 = 0, kSse = 1, kAvx = 2, kOpmask = 5, kZmmHi256 = 6, kHi16Zmm = 7;

 private:
  std::span<const uint8_t> ComponentSlice(int feature, int index, uint32_t stride) const;

  std::span<const uint8_t> raw_;
};

}  // namespace heapgraph::roots
