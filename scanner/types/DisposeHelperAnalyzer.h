// scanner/types/: which words of a clang Block (or of a __block variable's Block_byref) its dispose
// helper releases, found by reading the helper's machine code with Capstone — never by running it.
// May include heap/, roots/ and scanner/.
//
// The helper is called with the block (or byref) in the first argument register. The analyzer
// follows every path from the entry (conditional branches both ways, direct jumps inside a window
// after the entry), tracking which registers and stack slots hold the block's address plus an
// offset, or a word loaded from the block at an offset, and records
//   - _Block_object_dispose(word at +off, flags): the capture at +off with those flags
//     (BLOCK_FIELD_IS_OBJECT 3, IS_BLOCK 7, IS_BYREF 8, IS_WEAK 16, BLOCK_BYREF_CALLER 128);
//   - any other call (or tail call) with `this` = block + off: a C++ object living inline in the
//     block at +off, destroyed by that callee (a captured shared_ptr copy at -O0);
//   - a word loaded from the block at +off and then dereferenced or passed to another call: a
//     pointer released by inlined code (the same shared_ptr at -O2: its control block).
// _Block_object_dispose is recognised as its own address or through a GOT slot bound to it (a
// PLT stub `jmp *slot(%rip)` or a `call *slot(%rip)`), so lazy binding does not matter.
//
// Analyze() never allocates (Capstone's handle and instruction buffer are made by the
// constructor; cs_disasm_iter only fills them), so it can run in the leak scan's snapshot child.
// One analyzer must not be used by two threads at once. Only x86-64 is decoded today; the
// architecture is a constructor argument so that an aarch64 decoder can be added beside it
// (Analyze() on aarch64 reports an incomplete, empty result).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace heapgraph::scanner::types {

// Flags of _Block_object_assign/_Block_object_dispose (Block_private.h).
enum BlockFieldFlags : uint32_t {
  kBlockFieldIsObject = 3,
  kBlockFieldIsBlock = 7,
  kBlockFieldIsByref = 8,
  kBlockFieldIsWeak = 16,
  kBlockByrefCaller = 128,
};

enum class CapturedSlotKind : uint8_t {
  kObject,     // _Block_object_dispose(…, 3): an object pointer the runtime releases
  kBlock,      // flags 7: another Block (strong)
  kByref,      // flags 8: a __block variable's heap Block_byref (strong)
  kWeak,       // not owned: BLOCK_FIELD_IS_WEAK, or BLOCK_BYREF_CALLER (a byref helper's object
               // or block variable under manual retain/release, which the runtime neither
               // retains nor releases)
  kDestroyed,  // a C++ object inline at +offset, passed as `this` to `callee`
  kReleased,   // a pointer at +offset, released by inlined code (or passed to `callee`)
};

// The owning kinds: everything but kWeak.
inline bool IsStrong(CapturedSlotKind kind) {
  return kind != CapturedSlotKind::kWeak;
}

struct CapturedSlot {
  uint32_t offset = 0;  // from the start of the block (or byref)
  CapturedSlotKind kind = CapturedSlotKind::kObject;
  uint32_t flags = 0;   // _Block_object_dispose flags, when it is the callee
  uint64_t callee = 0;  // the destructor or release function, when it is not
};

struct DisposeAnalysis {
  static constexpr size_t kMaxSlots = 32;
  std::array<CapturedSlot, kMaxSlots> slots{};
  uint32_t count = 0;  // slots sorted by offset, one per offset
  // False when a path could not be followed to its end: an undecodable or unreadable instruction,
  // an indirect jump, the instruction budget, or more slots than kMaxSlots. The slots found are
  // still right; some may be missing.
  bool complete = true;
  uint32_t instructions = 0;  // decoded, over all paths

  std::span<const CapturedSlot> captured() const { return {slots.data(), count}; }
  const CapturedSlot* Find(uint32_t offset) const;
};

// A readable range of code: the analyzer reads no byte outside the ranges it is given.
struct CodeRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

class DisposeHelperAnalyzer {
 public:
  enum class Arch : uint8_t { kX86_64, kAarch64 };

  static constexpr uint32_t kWindowBytes = 4096;  // direct jumps beyond this are tail calls
  static constexpr uint32_t kMaxInstructions = 2048;

  // `dispose`: every definition of _Block_object_dispose (a program may define its own, as the
  // runtime's symbols are weak), `dispose_slots`: the GOT slots bound to it (DynamicSymbols),
  // `code`: the executable mappings; all sorted. The spans must outlive the analyzer.
  DisposeHelperAnalyzer(Arch arch, std::span<const uint64_t> dispose,
                        std::span<const uint64_t> dispose_slots, std::span<const CodeRange> code);
  ~DisposeHelperAnalyzer();
  DisposeHelperAnalyzer(const DisposeHelperAnalyzer&) = delete;
  DisposeHelperAnalyzer& operator=(const DisposeHelperAnalyzer&) = delete;

  // False if Capstone could not be opened; Analyze() then returns incomplete, empty results.
  bool ok() const { return handle_ != 0; }
  Arch arch() const { return arch_; }

  DisposeAnalysis Analyze(uint64_t helper) const;

 private:
  struct Path;
  class X86Walker;

  // The readable range containing [address, address + 1), or nullptr.
  const CodeRange* FindCode(uint64_t address) const;
  bool IsDisposeSlot(uint64_t slot) const;
  // True if a call or jump to `target` reaches _Block_object_dispose (directly or via a PLT stub).
  bool IsDisposeTarget(uint64_t target) const;
  // The GOT slot of a PLT stub at `target` (`[endbr64;] [bnd] jmp *slot(%rip)`), or 0.
  uint64_t PltSlot(uint64_t target) const;

  Arch arch_;
  std::span<const uint64_t> dispose_;
  std::span<const uint64_t> dispose_slots_;
  std::span<const CodeRange> code_;
  size_t handle_ = 0;              // csh
  mutable void* insn_ = nullptr;   // cs_insn*: the walker's current instruction
  mutable void* probe_ = nullptr;  // cs_insn*: PLT stubs looked at from a call or jump
};

}  // namespace heapgraph::scanner::types
