#include "heap/platform/EhFrameRules.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "heap/platform/ByteReader.h"
#include "heap/platform/DwarfExpression.h"
#include "heap/platform/LoadedObject.h"

namespace heapgraph {
namespace {

// DWARF register numbers of x86-64 (System V psABI) and the encodings and call-frame
// instructions read here (DWARF 4 section 6.4.2, LSB's .eh_frame_hdr).
constexpr uint64_t kRbp = 6;
constexpr uint64_t kRsp = 7;
constexpr uint64_t kReturnAddress = 16;

constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeDatarelSdata4 = 0x3b;

enum Op : uint8_t {
  kNop = 0x00,
  kAdvanceLoc1 = 0x02,
  kAdvanceLoc2 = 0x03,
  kAdvanceLoc4 = 0x04,
  kOffsetExtended = 0x05,
  kRestoreExtended = 0x06,
  kUndefined = 0x07,
  kSameValue = 0x08,
  kRegister = 0x09,
  kRememberState = 0x0a,
  kRestoreState = 0x0b,
  kDefCfa = 0x0c,
  kDefCfaRegister = 0x0d,
  kDefCfaOffset = 0x0e,
  kExpression = 0x10,
  kOffsetExtendedSf = 0x11,
  kDefCfaSf = 0x12,
  kDefCfaOffsetSf = 0x13,
  kValOffset = 0x14,
  kValOffsetSf = 0x15,
  kValExpression = 0x16,
  kDefCfaExpression = 0x0f,
  kGnuArgsSize = 0x2e,
};

// A register's rule (DWARF 5 section 6.4.1). `value`: the offset from the CFA (kOffset,
// kValOffset), the register holding it (kRegister), or where the expression's block (its ULEB128
// length, then its bytes) lies, as an offset from the program's `base` (kExpression,
// kValExpression).
struct RegisterRule {
  enum Kind : uint8_t {
    kSame,
    kUndefined,
    kOffset,
    kValOffset,
    kRegister,
    kExpression,
    kValExpression
  };
  Kind kind = kSame;
  int32_t value = 0;
};

struct FrameState {
  uint64_t cfa_register = kRsp;
  int64_t cfa_offset = 8;
  int64_t cfa_expression = -1;  // offset of DW_CFA_def_cfa_expression's block from `base`, or -1
  RegisterRule registers[FrameRegisters::kCount];
  bool unsupported = false;  // a rule or register this reader cannot hold
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_register = kReturnAddress;
  uint8_t fde_encoding = 0;
  bool has_augmentation_data = false;
  bool signal_frame = false;  // augmentation 'S'
  const uint8_t* instructions = nullptr;
  const uint8_t* end = nullptr;
};

// The states DW_CFA_remember_state keeps, for one program at a time (≈ 1.3 KiB on the stack of
// a hook, so the CIE's program and the FDE's share one). Raw bytes: a state is stored before it
// is loaded, so nothing is initialised (every rule lookup that misses the cache pays for this).
struct RememberedStates {
  alignas(FrameState) unsigned char bytes[sizeof(FrameState) * EhFrameRules::kMaxRememberedStates];
  void Store(int i, const FrameState& state) {
    memcpy(bytes + sizeof(FrameState) * static_cast<size_t>(i), &state, sizeof(FrameState));
  }
  void Load(int i, FrameState* state) const {
    memcpy(state, bytes + sizeof(FrameState) * static_cast<size_t>(i), sizeof(FrameState));
  }
};
static_assert(std::is_trivially_copyable_v<FrameState>);

// Runs call-frame instructions [at, end) on `state` while the location stays <= pc. `initial`
// is the state after the CIE's instructions (DW_CFA_restore), null while running those. `base`:
// where expression offsets count from (the object's first mapped byte). `remembered`: scratch,
// owned by the caller, free once Run returned.
class CfiProgram {
 public:
  CfiProgram(const Cie& cie, uintptr_t location, uintptr_t pc, const FrameState* initial,
             const uint8_t* base, RememberedStates* remembered)
      : cie_(cie),
        location_(location),
        pc_(pc),
        initial_(initial),
        base_(base),
        remembered_(remembered) {}

  // False when an instruction is unknown or the bytes run out.
  bool Run(ByteReader reader, FrameState* state) {
    while (reader.at < reader.end && !reader.bad && !state->unsupported) {
      if (!Step(reader, state)) return false;
      if (location_ > pc_) return true;
    }
    return !reader.bad;
  }

 private:
  bool Advance(uint64_t delta) {
    location_ += delta * cie_.code_align;
    return true;
  }
  // Registers beyond the general ones and rip (vector registers) are not tracked: their rules
  // are skipped.
  void Set(FrameState* state, uint64_t reg, RegisterRule::Kind kind, int64_t value) {
    if (reg >= FrameRegisters::kCount) return;
    if (value < INT32_MIN || value > INT32_MAX) {
      state->unsupported = true;
      return;
    }
    state->registers[reg] = RegisterRule{kind, static_cast<int32_t>(value)};
  }
  // An expression block at the reader: its offset kept, its bytes skipped.
  int64_t Block(ByteReader& reader) {
    int64_t offset = reader.at - base_;
    reader.Skip(reader.Uleb());
    return offset;
  }
  void Restore(FrameState* state, uint64_t reg) {
    if (reg >= FrameRegisters::kCount) return;
    if (initial_ == nullptr) {
      state->unsupported = true;
    } else {
      state->registers[reg] = initial_->registers[reg];
    }
  }
  void DefineCfa(FrameState* state, uint64_t reg, int64_t offset) {
    state->cfa_register = reg;
    state->cfa_offset = offset;
    state->cfa_expression = -1;
  }

  bool Step(ByteReader& reader, FrameState* state);

  const Cie& cie_;
  uintptr_t location_;
  uintptr_t pc_;
  const FrameState* initial_;
  const uint8_t* base_;
  RememberedStates* remembered_;
  int remembered_count_ = 0;
};

bool CfiProgram::Step(ByteReader& reader, FrameState* state) {
  uint8_t op = reader.Fixed<uint8_t>();
  uint8_t operand = op & 0x3f;
  switch (op & 0xc0) {
    case 0x40:
      return Advance(operand);
    case 0x80:
      Set(state, operand, RegisterRule::kOffset,
          static_cast<int64_t>(reader.Uleb()) * cie_.data_align);
      return true;
    case 0xc0:
      Restore(state, operand);
      return true;
    default:
      break;
  }
  switch (op) {
    case kNop:
      return true;
    case kAdvanceLoc1:
      return Advance(reader.Fixed<uint8_t>());
    case kAdvanceLoc2:
      return Advance(reader.Fixed<uint16_t>());
    case kAdvanceLoc4:
      return Advance(reader.Fixed<uint32_t>());
    case kOffsetExtended: {
      uint64_t reg = reader.Uleb();
      Set(state, reg, RegisterRule::kOffset, static_cast<int64_t>(reader.Uleb()) * cie_.data_align);
      return true;
    }
    case kOffsetExtendedSf: {
      uint64_t reg = reader.Uleb();
      Set(state, reg, RegisterRule::kOffset, reader.Sleb() * cie_.data_align);
      return true;
    }
    case kRestoreExtended:
      Restore(state, reader.Uleb());
      return true;
    case kUndefined:
      Set(state, reader.Uleb(), RegisterRule::kUndefined, 0);
      return true;
    case kSameValue:
      Set(state, reader.Uleb(), RegisterRule::kSame, 0);
      return true;
    case kRegister: {
      uint64_t reg = reader.Uleb();
      uint64_t from = reader.Uleb();
      if (from >= FrameRegisters::kCount) {
        state->unsupported = true;
        return true;
      }
      Set(state, reg, RegisterRule::kRegister, static_cast<int64_t>(from));
      return true;
    }
    case kValOffset: {
      uint64_t reg = reader.Uleb();
      Set(state, reg, RegisterRule::kValOffset,
          static_cast<int64_t>(reader.Uleb()) * cie_.data_align);
      return true;
    }
    case kValOffsetSf: {
      uint64_t reg = reader.Uleb();
      Set(state, reg, RegisterRule::kValOffset, reader.Sleb() * cie_.data_align);
      return true;
    }
    case kExpression:
    case kValExpression: {
      uint64_t reg = reader.Uleb();
      int64_t block = Block(reader);
      Set(state, reg, op == kExpression ? RegisterRule::kExpression : RegisterRule::kValExpression,
          block);
      return true;
    }
    case kDefCfaExpression:
      state->cfa_expression = Block(reader);
      return true;
    case kRememberState:
      if (remembered_count_ == EhFrameRules::kMaxRememberedStates) return false;
      remembered_->Store(remembered_count_++, *state);
      return true;
    case kRestoreState:
      if (remembered_count_ == 0) return false;
      remembered_->Load(--remembered_count_, state);
      return true;
    case kDefCfa: {
      uint64_t reg = reader.Uleb();
      DefineCfa(state, reg, static_cast<int64_t>(reader.Uleb()));
      return true;
    }
    case kDefCfaSf: {
      uint64_t reg = reader.Uleb();
      DefineCfa(state, reg, reader.Sleb() * cie_.data_align);
      return true;
    }
    case kDefCfaRegister:
      state->cfa_register = reader.Uleb();
      state->cfa_expression = -1;
      return true;
    case kDefCfaOffset:
      state->cfa_offset = static_cast<int64_t>(reader.Uleb());
      return true;
    case kDefCfaOffsetSf:
      state->cfa_offset = reader.Sleb() * cie_.data_align;
      return true;
    case kGnuArgsSize:
      reader.Uleb();
      return true;
    default:
      return false;  // DW_CFA_set_loc, vendor operations
  }
}

// The CIE at `at` (inside [begin, end) of the object's mapping); false for anything this reader
// does not handle.
bool ReadCie(const uint8_t* at, const uint8_t* image_end, Cie* cie) {
  ByteReader reader{at, image_end};
  uint32_t length = reader.Fixed<uint32_t>();
  if (length == 0 || length == 0xffffffffu || !reader.Has(length)) return false;
  cie->end = reader.at + length;
  reader.end = cie->end;
  if (reader.Fixed<uint32_t>() != 0) return false;  // not a CIE
  uint8_t version = reader.Fixed<uint8_t>();
  if (version != 1 && version != 3) return false;
  const uint8_t* augmentation = reader.at;
  while (reader.Has(1) && *reader.at != 0) ++reader.at;
  reader.Skip(1);
  cie->code_align = reader.Uleb();
  cie->data_align = reader.Sleb();
  cie->ra_register = version == 1 ? reader.Fixed<uint8_t>() : reader.Uleb();
  if (augmentation[0] == 'z') {
    cie->has_augmentation_data = true;
    uint64_t data_length = reader.Uleb();
    const uint8_t* data_end = reader.at + data_length;
    for (const uint8_t* c = augmentation + 1; *c != 0 && !reader.bad; ++c) {
      if (*c == 'R') {
        cie->fde_encoding = reader.Fixed<uint8_t>();
      } else if (*c == 'L') {
        reader.Fixed<uint8_t>();
      } else if (*c == 'P') {
        reader.Encoded(reader.Fixed<uint8_t>() & 0x7f);  // the personality: skipped
      } else if (*c == 'S') {
        cie->signal_frame = true;
      } else {
        return false;  // every unknown augmentation
      }
    }
    if (reader.bad || reader.at > data_end) return false;
    reader.at = data_end;
  } else if (augmentation[0] != 0) {
    return false;
  }
  if (reader.bad) return false;
  cie->instructions = reader.at;
  return true;
}

// The FDE of `pc` from .eh_frame_hdr's sorted table; null when there is none.
const uint8_t* FindFde(const LoadedObject& object, uintptr_t pc) {
  const auto* hdr = static_cast<const uint8_t*>(object.eh_frame_hdr);
  ByteReader reader{hdr, reinterpret_cast<const uint8_t*>(object.map_end)};
  if (hdr == nullptr || reader.Fixed<uint8_t>() != 1) return nullptr;
  uint8_t frame_encoding = reader.Fixed<uint8_t>();
  uint8_t count_encoding = reader.Fixed<uint8_t>();
  uint8_t table_encoding = reader.Fixed<uint8_t>();
  if (frame_encoding == kPeOmit || count_encoding == kPeOmit ||
      table_encoding != kPeDatarelSdata4) {
    return nullptr;
  }
  reader.Encoded(frame_encoding);
  uint64_t count = reader.Encoded(count_encoding);
  if (reader.bad || count == 0 || !reader.Has(count * 8)) return nullptr;
  const auto* table = reinterpret_cast<const int32_t*>(reader.at);
  auto base = reinterpret_cast<uintptr_t>(hdr);
  uint64_t low = 0, high = count;  // the last entry whose start <= pc is below `high`
  while (high - low > 1) {
    uint64_t mid = low + (high - low) / 2;
    int32_t start;
    memcpy(&start, table + 2 * mid, sizeof(start));
    if (base + static_cast<intptr_t>(start) <= pc) {
      low = mid;
    } else {
      high = mid;
    }
  }
  int32_t start, fde;
  memcpy(&start, table + 2 * low, sizeof(start));
  memcpy(&fde, table + 2 * low + 1, sizeof(fde));
  if (base + static_cast<intptr_t>(start) > pc) return nullptr;
  uintptr_t address = base + static_cast<intptr_t>(fde);
  if (address < object.map_start || address >= object.map_end) return nullptr;
  return reinterpret_cast<const uint8_t*>(address);
}

UnwindRule RuleOf(const FrameState& state, const Cie& cie) {
  UnwindRule rule;
  if (state.unsupported || cie.signal_frame || state.cfa_expression >= 0 || state.cfa_offset < 0 ||
      static_cast<uint64_t>(state.cfa_offset) > EhFrameRules::kMaxCfaOffset ||
      (state.cfa_register != kRsp && state.cfa_register != kRbp) ||
      cie.ra_register != kReturnAddress) {
    return rule;
  }
  const RegisterRule& ra = state.registers[kReturnAddress];
  const RegisterRule& rbp = state.registers[kRbp];
  if (ra.kind == RegisterRule::kUndefined) {
    rule.kind = UnwindRule::kEnd;
    return rule;
  }
  if (ra.kind != RegisterRule::kOffset || ra.value != -8) return rule;
  if (state.registers[kRsp].kind != RegisterRule::kSame) return rule;
  if (rbp.kind == RegisterRule::kOffset) {
    if (rbp.value < -int64_t{EhFrameRules::kMaxRbpDepth} || rbp.value > 0) return rule;
    rule.rbp_saved = true;
    rule.rbp_offset = rbp.value;
  } else if (rbp.kind != RegisterRule::kSame) {
    return rule;
  }
  rule.kind = UnwindRule::kSimple;
  rule.cfa_from_rbp = state.cfa_register == kRbp;
  rule.cfa_offset = static_cast<uint32_t>(state.cfa_offset);
  return rule;
}

// The FDE of `pc` opened: its CIE read, its code range, `reader` at its call-frame instructions,
// `base` the object's first mapped byte.
struct OpenFde {
  ByteReader reader{nullptr, nullptr};
  Cie cie;
  uintptr_t begin = 0;
  uintptr_t range = 0;
  const uint8_t* base = nullptr;
};

enum class Opened : uint8_t { kYes, kNoFde, kUnreadable };

// kNoFde when `pc` lies in no object or no FDE covers it; kUnreadable for an FDE or CIE this
// reader does not handle.
Opened Open(uintptr_t pc, OpenFde* fde) {
  LoadedObject object;
  if (!LoadedObject::Find(pc, &object)) return Opened::kNoFde;
  const uint8_t* at = FindFde(object, pc);
  if (at == nullptr) return object.eh_frame_hdr == nullptr ? Opened::kUnreadable : Opened::kNoFde;
  fde->base = reinterpret_cast<const uint8_t*>(object.map_start);
  const auto* image_end = reinterpret_cast<const uint8_t*>(object.map_end);
  ByteReader& reader = fde->reader;
  reader = ByteReader{at, image_end};
  uint32_t length = reader.Fixed<uint32_t>();
  if (length == 0 || length == 0xffffffffu || !reader.Has(length)) return Opened::kUnreadable;
  reader.end = reader.at + length;
  const uint8_t* cie_field = reader.at;
  uint32_t cie_offset = reader.Fixed<uint32_t>();
  if (cie_offset == 0) return Opened::kUnreadable;  // a CIE, not an FDE
  const uint8_t* cie_at = cie_field - cie_offset;
  if (reinterpret_cast<uintptr_t>(cie_at) < object.map_start ||
      !ReadCie(cie_at, image_end, &fde->cie)) {
    return Opened::kUnreadable;
  }
  fde->begin = reader.Encoded(fde->cie.fde_encoding);
  fde->range = reader.Encoded(fde->cie.fde_encoding & 0x0f);
  if (reader.bad) return Opened::kUnreadable;
  if (pc < fde->begin || pc - fde->begin >= fde->range) return Opened::kNoFde;
  if (fde->cie.has_augmentation_data) reader.Skip(reader.Uleb());
  return reader.bad ? Opened::kUnreadable : Opened::kYes;
}

// The state at `pc` of an opened FDE: the CIE's instructions, then the FDE's up to `pc`.
bool StateAt(const OpenFde& fde, uintptr_t pc, FrameState* state) {
  FrameState initial;
  initial.registers[kReturnAddress] = RegisterRule{RegisterRule::kSame, 0};
  RememberedStates remembered;
  CfiProgram cie_program(fde.cie, fde.begin, ~uintptr_t{0}, nullptr, fde.base, &remembered);
  if (!cie_program.Run(ByteReader{fde.cie.instructions, fde.cie.end}, &initial)) return false;
  *state = initial;
  CfiProgram fde_program(fde.cie, fde.begin, pc, &initial, fde.base, &remembered);
  return fde_program.Run(fde.reader, state) && !state->unsupported;
}

// An expression block (ULEB128 length, bytes) evaluated; false when it does not fit the object.
bool EvaluateBlock(const OpenFde& fde, int64_t offset, const FrameRegisters& registers,
                   uintptr_t initial, bool push_initial, StackWindow window, uintptr_t* result) {
  ByteReader reader{fde.base + offset, fde.cie.end > fde.reader.end ? fde.cie.end : fde.reader.end};
  uint64_t length = reader.Uleb();
  if (reader.bad || !reader.Has(length)) return false;
  return DwarfExpression::Evaluate(reader.at, reader.at + length, registers, initial, push_initial,
                                   window, result);
}

// The complete rule `state` of an opened FDE applied to `registers` (Step's contract).
EhFrameRules::Stepped Apply(const OpenFde& fde, const FrameState& state, FrameRegisters* registers,
                            StackWindow window) {
  using Stepped = EhFrameRules::Stepped;
  if (fde.cie.ra_register >= FrameRegisters::kCount) return Stepped::kFailed;
  const FrameRegisters& now = *registers;
  uintptr_t cfa = 0;
  if (state.cfa_expression >= 0) {
    if (!EvaluateBlock(fde, state.cfa_expression, now, 0, false, window, &cfa)) {
      return Stepped::kFailed;
    }
  } else {
    if (!now.Has(state.cfa_register)) return Stepped::kFailed;
    cfa = now.value[state.cfa_register] + static_cast<uintptr_t>(state.cfa_offset);
  }
  const RegisterRule& ra = state.registers[fde.cie.ra_register];
  if (ra.kind == RegisterRule::kUndefined) return Stepped::kEnd;
  if (ra.kind == RegisterRule::kSame) return Stepped::kFailed;  // would step in place
  FrameRegisters next = now;
  next.Set(kRsp, cfa);
  for (int reg = 0; reg < FrameRegisters::kCount; ++reg) {
    const RegisterRule& rule = state.registers[reg];
    uintptr_t value = 0, address = 0;
    switch (rule.kind) {
      case RegisterRule::kSame:
        continue;
      case RegisterRule::kUndefined:
        next.known &= ~(1u << reg);
        continue;
      case RegisterRule::kOffset:
        if (!window.Read(cfa + rule.value, sizeof(uintptr_t), &value)) return Stepped::kFailed;
        break;
      case RegisterRule::kValOffset:
        value = cfa + rule.value;
        break;
      case RegisterRule::kRegister:
        if (!now.Has(rule.value)) {
          next.known &= ~(1u << reg);
          continue;
        }
        value = now.value[rule.value];
        break;
      case RegisterRule::kExpression:
        if (!EvaluateBlock(fde, rule.value, now, cfa, true, window, &address) ||
            !window.Read(address, sizeof(uintptr_t), &value)) {
          return Stepped::kFailed;
        }
        break;
      case RegisterRule::kValExpression:
        if (!EvaluateBlock(fde, rule.value, now, cfa, true, window, &value)) {
          return Stepped::kFailed;
        }
        break;
    }
    next.Set(reg, value);
  }
  if (!next.Has(fde.cie.ra_register)) return Stepped::kFailed;
  next.Set(kReturnAddress, next.value[fde.cie.ra_register]);
  *registers = next;
  return fde.cie.signal_frame ? Stepped::kSignalFrame : Stepped::kStepped;
}

// A signal frame's rule as the cached walk steps it (UnwindRule::signal_frame): the FDE's own rules
// applied once to a frame whose rsp points at kMaxSignalWord marked words (word i holds kMark +
// i * kSpacing); the interrupted frame's rip, rsp and rbp must come out as marks exactly (read from
// those words: a value computed from one, e.g. a mark + 8, is no mark). Else the rule stays
// kNotSimple without it (the complete step). Not inlined: its 1 KiB of marked words stays off the
// stack of every other rule lookup (they run in the allocation hooks, on the program's stacks).
__attribute__((noinline)) UnwindRule SignalRule(const OpenFde& fde, const FrameState& state) {
  constexpr uintptr_t kMark = 0x5349000000000000, kSpacing = uintptr_t{1} << 20;
  uintptr_t words[EhFrameRules::kMaxSignalWord];
  for (uint32_t i = 0; i < EhFrameRules::kMaxSignalWord; ++i) words[i] = kMark + i * kSpacing;
  const auto low = reinterpret_cast<uintptr_t>(words);
  FrameRegisters registers;
  registers.known = 0;
  registers.Set(kRsp, low);
  UnwindRule rule;
  if (Apply(fde, state, &registers, StackWindow{low, low + sizeof(words)}) !=
      EhFrameRules::Stepped::kSignalFrame) {
    return rule;
  }
  const uint64_t wanted[3] = {kReturnAddress, kRsp, kRbp};
  for (int i = 0; i < 3; ++i) {
    const uintptr_t value = registers.value[wanted[i]];
    if (!registers.Has(wanted[i]) || value < kMark || (value - kMark) % kSpacing != 0 ||
        (value - kMark) / kSpacing >= EhFrameRules::kMaxSignalWord) {
      return rule;
    }
    rule.signal_words[i] = static_cast<uint8_t>((value - kMark) / kSpacing);
  }
  rule.signal_frame = true;
  return rule;
}

}  // namespace

UnwindRule EhFrameRules::Find(uintptr_t pc) {
  OpenFde fde;
  UnwindRule rule;
  Opened opened = Open(pc, &fde);
  if (opened != Opened::kYes) {
    rule.no_fde = opened == Opened::kNoFde;
    return rule;
  }
  FrameState state;
  if (!StateAt(fde, pc, &state)) return rule;
  return fde.cie.signal_frame ? SignalRule(fde, state) : RuleOf(state, fde.cie);
}

bool EhFrameRules::FunctionRange(uintptr_t pc, uintptr_t* begin, uintptr_t* end) {
  OpenFde fde;
  if (Open(pc, &fde) != Opened::kYes) return false;
  *begin = fde.begin;
  *end = fde.begin + fde.range;
  return true;
}

EhFrameRules::Stepped EhFrameRules::Step(uintptr_t pc, FrameRegisters* registers,
                                         StackWindow window) {
  OpenFde fde;
  Opened opened = Open(pc, &fde);
  if (opened != Opened::kYes) return opened == Opened::kNoFde ? Stepped::kNoFde : Stepped::kFailed;
  FrameState state;
  if (!StateAt(fde, pc, &state)) return Stepped::kFailed;
  return Apply(fde, state, registers, window);
}

}  // namespace heapgraph
