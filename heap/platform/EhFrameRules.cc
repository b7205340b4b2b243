#include "heap/platform/EhFrameRules.h"

#include <cstring>

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
  kGnuArgsSize = 0x2e,
};

// Bounded reads of the object's mapped image: a read past `end` sets `bad` and yields 0.
struct Reader {
  const uint8_t* at;
  const uint8_t* end;
  bool bad = false;

  bool Has(uintptr_t n) {
    if (bad || static_cast<uintptr_t>(end - at) < n) bad = true;
    return !bad;
  }
  template <typename T>
  T Fixed() {
    T value{};
    if (!Has(sizeof(T))) return value;
    memcpy(&value, at, sizeof(T));
    at += sizeof(T);
    return value;
  }
  uint64_t Uleb() {
    uint64_t value = 0;
    for (int shift = 0; Has(1); shift += 7) {
      uint8_t byte = *at++;
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return 0;
  }
  int64_t Sleb() {
    uint64_t value = 0;
    int shift = 0;
    while (Has(1)) {
      uint8_t byte = *at++;
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if ((byte & 0x80) == 0) {
        if (shift < 64 && (byte & 0x40) != 0) value |= ~uint64_t{0} << shift;
        return static_cast<int64_t>(value);
      }
    }
    return 0;
  }
  void Skip(uint64_t n) {
    if (Has(n)) at += n;
  }
  // A pointer in encoding `encoding` (absolute, or pc-relative to where it is stored); indirect,
  // text- and function-relative encodings are refused (bad).
  uintptr_t Encoded(uint8_t encoding, uintptr_t datarel_base = 0) {
    auto field = reinterpret_cast<uintptr_t>(at);
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case 0x00:
        value = Fixed<uint64_t>();
        break;
      case 0x01:
        value = Uleb();
        break;
      case 0x02:
        value = Fixed<uint16_t>();
        break;
      case 0x03:
        value = Fixed<uint32_t>();
        break;
      case 0x04:
        value = Fixed<uint64_t>();
        break;
      case 0x09:
        value = static_cast<uint64_t>(Sleb());
        break;
      case 0x0a:
        value = static_cast<uint64_t>(int64_t{Fixed<int16_t>()});
        break;
      case 0x0b:
        value = static_cast<uint64_t>(int64_t{Fixed<int32_t>()});
        break;
      case 0x0c:
        value = Fixed<uint64_t>();
        break;
      default:
        bad = true;
        return 0;
    }
    switch (encoding & 0x70) {
      case 0x00:
        return value;
      case 0x10:
        return field + value;
      case 0x30:
        return datarel_base + value;
      default:
        bad = true;
        return 0;
    }
  }
};

// A register's rule as far as the frame step needs it.
struct RegisterRule {
  enum Kind : uint8_t { kSame, kOffset, kUndefined, kOther };
  Kind kind = kSame;
  int64_t offset = 0;
};

struct FrameState {
  uint64_t cfa_register = kRsp;
  int64_t cfa_offset = 8;
  RegisterRule rbp;
  RegisterRule ra;
  bool unsupported = false;  // a rule outside the shapes UnwindRule holds
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_register = kReturnAddress;
  uint8_t fde_encoding = 0;
  bool has_augmentation_data = false;
  const uint8_t* instructions = nullptr;
  const uint8_t* end = nullptr;
};

RegisterRule* Tracked(FrameState* state, uint64_t reg, uint64_t ra_register) {
  if (reg == kRbp) return &state->rbp;
  if (reg == ra_register) return &state->ra;
  return nullptr;
}

// Runs call-frame instructions [at, end) on `state` while the location stays <= pc. `initial`
// is the state after the CIE's instructions (DW_CFA_restore), null while running those.
class CfiProgram {
 public:
  CfiProgram(const Cie& cie, uintptr_t location, uintptr_t pc, const FrameState* initial)
      : cie_(cie), location_(location), pc_(pc), initial_(initial) {}

  // False when an instruction is unknown or the bytes run out.
  bool Run(Reader reader, FrameState* state) {
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
  void SetOffset(FrameState* state, uint64_t reg, int64_t offset) {
    RegisterRule* rule = Tracked(state, reg, cie_.ra_register);
    if (rule != nullptr) *rule = RegisterRule{RegisterRule::kOffset, offset};
  }
  void SetKind(FrameState* state, uint64_t reg, RegisterRule::Kind kind) {
    RegisterRule* rule = Tracked(state, reg, cie_.ra_register);
    if (rule != nullptr) *rule = RegisterRule{kind, 0};
  }
  void Restore(FrameState* state, uint64_t reg) {
    RegisterRule* rule = Tracked(state, reg, cie_.ra_register);
    if (rule == nullptr) return;
    if (initial_ == nullptr) {
      state->unsupported = true;
    } else {
      *rule = reg == kRbp ? initial_->rbp : initial_->ra;
    }
  }
  void DefineCfa(FrameState* state, uint64_t reg, int64_t offset) {
    state->cfa_register = reg;
    state->cfa_offset = offset;
  }

  bool Step(Reader& reader, FrameState* state);

  const Cie& cie_;
  uintptr_t location_;
  uintptr_t pc_;
  const FrameState* initial_;
  FrameState remembered_[EhFrameRules::kMaxRememberedStates];
  int remembered_count_ = 0;
};

bool CfiProgram::Step(Reader& reader, FrameState* state) {
  uint8_t op = reader.Fixed<uint8_t>();
  uint8_t operand = op & 0x3f;
  switch (op & 0xc0) {
    case 0x40:
      return Advance(operand);
    case 0x80:
      SetOffset(state, operand, static_cast<int64_t>(reader.Uleb()) * cie_.data_align);
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
      SetOffset(state, reg, static_cast<int64_t>(reader.Uleb()) * cie_.data_align);
      return true;
    }
    case kOffsetExtendedSf: {
      uint64_t reg = reader.Uleb();
      SetOffset(state, reg, reader.Sleb() * cie_.data_align);
      return true;
    }
    case kRestoreExtended:
      Restore(state, reader.Uleb());
      return true;
    case kUndefined:
      SetKind(state, reader.Uleb(), RegisterRule::kUndefined);
      return true;
    case kSameValue:
      SetKind(state, reader.Uleb(), RegisterRule::kSame);
      return true;
    case kRegister: {
      uint64_t reg = reader.Uleb();
      reader.Uleb();
      SetKind(state, reg, RegisterRule::kOther);
      return true;
    }
    case kValOffset:
    case kValOffsetSf: {
      uint64_t reg = reader.Uleb();
      if (op == kValOffset) {
        reader.Uleb();
      } else {
        reader.Sleb();
      }
      SetKind(state, reg, RegisterRule::kOther);
      return true;
    }
    case kExpression:
    case kValExpression: {
      uint64_t reg = reader.Uleb();
      reader.Skip(reader.Uleb());
      SetKind(state, reg, RegisterRule::kOther);
      return true;
    }
    case kRememberState:
      if (remembered_count_ == EhFrameRules::kMaxRememberedStates) return false;
      remembered_[remembered_count_++] = *state;
      return true;
    case kRestoreState:
      if (remembered_count_ == 0) return false;
      *state = remembered_[--remembered_count_];
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
      return false;  // DW_CFA_def_cfa_expression, set_loc, vendor ops: not simple
  }
}

// The CIE at `at` (inside [begin, end) of the object's mapping); false for anything this reader
// does not handle (signal frames included).
bool ReadCie(const uint8_t* at, const uint8_t* image_end, Cie* cie) {
  Reader reader{at, image_end};
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
      } else {
        return false;  // 'S' (signal frame) and every unknown augmentation
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
  Reader reader{hdr, reinterpret_cast<const uint8_t*>(object.map_end)};
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

UnwindRule RuleOf(const FrameState& state) {
  UnwindRule rule;
  if (state.unsupported || state.cfa_offset < 0 ||
      static_cast<uint64_t>(state.cfa_offset) > EhFrameRules::kMaxCfaOffset ||
      (state.cfa_register != kRsp && state.cfa_register != kRbp)) {
    return rule;
  }
  if (state.ra.kind == RegisterRule::kUndefined) {
    rule.kind = UnwindRule::kEnd;
    return rule;
  }
  if (state.ra.kind != RegisterRule::kOffset || state.ra.offset != -8) return rule;
  if (state.rbp.kind == RegisterRule::kOffset) {
    if (state.rbp.offset < -int64_t{EhFrameRules::kMaxRbpDepth} || state.rbp.offset > 0)
      return rule;
    rule.rbp_saved = true;
    rule.rbp_offset = static_cast<int32_t>(state.rbp.offset);
  } else if (state.rbp.kind != RegisterRule::kSame) {
    return rule;
  }
  rule.kind = UnwindRule::kSimple;
  rule.cfa_from_rbp = state.cfa_register == kRbp;
  rule.cfa_offset = static_cast<uint32_t>(state.cfa_offset);
  return rule;
}

// The FDE of `pc` opened: its CIE read, its code range, `reader` at its call-frame instructions.
struct OpenFde {
  Reader reader{nullptr, nullptr};
  Cie cie;
  uintptr_t begin = 0;
  uintptr_t range = 0;
};

// False when `pc` has no object, no FDE, or an FDE or CIE this reader does not handle.
bool Open(uintptr_t pc, OpenFde* fde) {
  LoadedObject object;
  if (!LoadedObject::Find(pc, &object)) return false;
  const uint8_t* at = FindFde(object, pc);
  if (at == nullptr) return false;
  const auto* image_end = reinterpret_cast<const uint8_t*>(object.map_end);
  Reader& reader = fde->reader;
  reader = Reader{at, image_end};
  uint32_t length = reader.Fixed<uint32_t>();
  if (length == 0 || length == 0xffffffffu || !reader.Has(length)) return false;
  reader.end = reader.at + length;
  const uint8_t* cie_field = reader.at;
  uint32_t cie_offset = reader.Fixed<uint32_t>();
  if (cie_offset == 0) return false;  // a CIE, not an FDE
  const uint8_t* cie_at = cie_field - cie_offset;
  if (reinterpret_cast<uintptr_t>(cie_at) < object.map_start ||
      !ReadCie(cie_at, image_end, &fde->cie)) {
    return false;
  }
  fde->begin = reader.Encoded(fde->cie.fde_encoding);
  fde->range = reader.Encoded(fde->cie.fde_encoding & 0x0f);
  if (reader.bad || pc < fde->begin || pc - fde->begin >= fde->range) return false;
  if (fde->cie.has_augmentation_data) reader.Skip(reader.Uleb());
  return !reader.bad;
}

}  // namespace

UnwindRule EhFrameRules::Find(uintptr_t pc) {
  OpenFde fde;
  if (!Open(pc, &fde)) return UnwindRule();
  FrameState initial;
  initial.ra = RegisterRule{RegisterRule::kOther, 0};  // kNotSimple unless the CIE places it
  CfiProgram cie_program(fde.cie, fde.begin, ~uintptr_t{0}, nullptr);
  if (!cie_program.Run(Reader{fde.cie.instructions, fde.cie.end}, &initial)) return UnwindRule();
  FrameState state = initial;
  CfiProgram fde_program(fde.cie, fde.begin, pc, &initial);
  if (!fde_program.Run(fde.reader, &state)) return UnwindRule();
  return RuleOf(state);
}

bool EhFrameRules::FunctionRange(uintptr_t pc, uintptr_t* begin, uintptr_t* end) {
  OpenFde fde;
  if (!Open(pc, &fde)) return false;
  *begin = fde.begin;
  *end = fde.begin + fde.range;
  return true;
}

}  // namespace heapgraph
