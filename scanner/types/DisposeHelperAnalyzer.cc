// scanner/types/: see DisposeHelperAnalyzer.h. May include heap/, roots/ and scanner/.
#include "scanner/types/DisposeHelperAnalyzer.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <bitset>

namespace heapgraph::scanner::types {

const CapturedSlot* DisposeAnalysis::Find(uint32_t offset) const {
  for (const CapturedSlot& s : captured()) {
    if (s.offset == offset) return &s;
  }
  return nullptr;
}

namespace {

enum class ValueKind : uint8_t {
  kUnknown,
  kBlockAddress,  // the block's address + v
  kBlockWord,     // the 8-byte word loaded from the block at + v
  kConstant,      // v
  kStack,         // the entry stack pointer + v
};

struct Value {
  ValueKind kind = ValueKind::kUnknown;
  int64_t v = 0;
};

constexpr int kRsp = 4;
constexpr int kRbp = 5;
constexpr int kRsi = 6;
constexpr int kRdi = 7;
constexpr int kNoGpr = -1;

// The general-purpose register family (0..15 in encoding order) of `reg`, and its width in bytes.
int Gpr(unsigned reg, int* width) {
  struct Family {
    unsigned r64, r32, r16, r8;
  };
  static constexpr Family kFamilies[16] = {
      {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL},
      {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL},
      {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL},
      {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL},
      {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL},
      {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL},
      {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL},
      {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL},
      {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B},
      {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B},
      {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B},
      {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B},
      {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B},
      {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B},
      {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B},
      {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B},
  };
  for (int i = 0; i < 16; ++i) {
    const Family& f = kFamilies[i];
    if (reg == f.r64) return *width = 8, i;
    if (reg == f.r32) return *width = 4, i;
    if (reg == f.r16) return *width = 2, i;
    if (reg == f.r8) return *width = 1, i;
  }
  if (reg == X86_REG_AH || reg == X86_REG_CH || reg == X86_REG_DH || reg == X86_REG_BH) {
    *width = 1;
    return reg == X86_REG_AH ? 0 : reg == X86_REG_CH ? 1 : reg == X86_REG_DH ? 2 : 3;
  }
  *width = 0;
  return kNoGpr;
}

// Registers and spilled stack words along one path.
struct State {
  static constexpr size_t kStackSlots = 16;
  std::array<Value, 16> regs{};
  std::array<std::pair<int64_t, Value>, kStackSlots> stack{};
  uint8_t stack_count = 0;

  Value Load(int64_t offset) const {
    for (uint8_t i = 0; i < stack_count; ++i) {
      if (stack[i].first == offset) return stack[i].second;
    }
    return {};
  }
  void Store(int64_t offset, Value v) {
    for (uint8_t i = 0; i < stack_count; ++i) {
      if (stack[i].first == offset) {
        stack[i].second = v;
        return;
      }
    }
    if (v.kind == ValueKind::kUnknown) return;
    if (stack_count == kStackSlots) stack_count = 0;  // forget the oldest spills wholesale
    stack[stack_count++] = {offset, v};
  }
};

int SlotRank(CapturedSlotKind kind) {
  switch (kind) {
    case CapturedSlotKind::kDestroyed:
      return 1;
    case CapturedSlotKind::kReleased:
      return 2;
    default:
      return 0;
  }
}

CapturedSlotKind KindFromFlags(uint32_t flags) {
  // _Block_object_dispose releases nothing for these (Block_private.h, runtime.c).
  if (flags & (kBlockFieldIsWeak | kBlockByrefCaller)) return CapturedSlotKind::kWeak;
  if (flags & kBlockFieldIsByref) return CapturedSlotKind::kByref;
  if ((flags & kBlockFieldIsBlock) == kBlockFieldIsBlock) return CapturedSlotKind::kBlock;
  return CapturedSlotKind::kObject;
}

bool IsConditionalJump(unsigned id) {
  switch (id) {
    case X86_INS_JAE:
    case X86_INS_JA:
    case X86_INS_JBE:
    case X86_INS_JB:
    case X86_INS_JCXZ:
    case X86_INS_JECXZ:
    case X86_INS_JE:
    case X86_INS_JGE:
    case X86_INS_JG:
    case X86_INS_JLE:
    case X86_INS_JL:
    case X86_INS_JNE:
    case X86_INS_JNO:
    case X86_INS_JNP:
    case X86_INS_JNS:
    case X86_INS_JO:
    case X86_INS_JP:
    case X86_INS_JRCXZ:
    case X86_INS_JS:
      return true;
    default:
      return false;
  }
}

}  // namespace

// One analysis of an x86-64 helper: a work list of (address, state) pairs, every address of the
// window decoded at most once.
class DisposeHelperAnalyzer::X86Walker {
 public:
  X86Walker(const DisposeHelperAnalyzer& analyzer, uint64_t helper, DisposeAnalysis* out)
      : a_(analyzer), helper_(helper), out_(out), insn_(static_cast<cs_insn*>(analyzer.insn_)) {}

  void Run() {
    State entry;
    entry.regs[kRdi] = {ValueKind::kBlockAddress, 0};
    entry.regs[kRsp] = {ValueKind::kStack, 0};
    Push(helper_, entry);
    while (pending_count_ > 0) {
      Pending p = pending_[--pending_count_];
      Follow(p.address, p.state);
    }
  }

 private:
  struct Pending {
    uint64_t address;
    State state;
  };
  enum class Flow : uint8_t { kNext, kStop, kJump };

  bool InWindow(uint64_t address) const {
    return address >= helper_ && address - helper_ < kWindowBytes;
  }

  void Push(uint64_t address, const State& state) {
    if (!InWindow(address) || visited_[address - helper_]) return;
    if (pending_count_ == pending_.size()) {
      out_->complete = false;
      return;
    }
    pending_[pending_count_++] = {address, state};
  }

  void Follow(uint64_t address, State state) {
    while (InWindow(address) && !visited_[address - helper_]) {
      visited_[address - helper_] = true;
      if (out_->instructions >= kMaxInstructions || !Decode(address)) {
        out_->complete = false;
        return;
      }
      ++out_->instructions;
      uint64_t next = address + insn_->size;
      Flow flow = Step(state, &next);
      if (flow == Flow::kStop) return;
      address = next;
    }
    if (!InWindow(address)) out_->complete = false;
  }

  bool Decode(uint64_t address) {
    const CodeRange* range = a_.FindCode(address);
    if (range == nullptr) return false;
    const uint8_t* code = reinterpret_cast<const uint8_t*>(address);
    size_t size = std::min<uint64_t>(16, range->end - address);
    uint64_t at = address;
    return cs_disasm_iter(a_.handle_, &code, &size, &at, insn_);
  }

  Value Read(const State& s, const cs_x86_op& op) {
    if (op.type == X86_OP_IMM) return {ValueKind::kConstant, op.imm};
    if (op.type != X86_OP_REG) return {};
    int width = 0;
    int r = Gpr(op.reg, &width);
    if (r == kNoGpr) return {};
    Value v = s.regs[r];
    if (width == 8) return v;
    if (v.kind == ValueKind::kConstant && width == 4)
      return {ValueKind::kConstant, v.v & 0xffffffff};
    return {};
  }

  void Write(State& s, const cs_x86_op& op, Value v) {
    if (op.type != X86_OP_REG) return;
    int width = 0;
    int r = Gpr(op.reg, &width);
    if (r == kNoGpr) return;
    if (width == 4 && v.kind == ValueKind::kConstant) v.v &= 0xffffffff;  // zero-extended
    s.regs[r] = (width >= 4 && (width == 8 || v.kind == ValueKind::kConstant)) ? v : Value{};
  }

  // The effective address of a memory operand. A base or index holding a word loaded from the
  // block means that word is dereferenced: a pointer the helper releases inline.
  Value Address(const State& s, const x86_op_mem& m) {
    int width = 0;
    int index = m.index == X86_REG_INVALID ? kNoGpr : Gpr(m.index, &width);
    if (index != kNoGpr) NoteUse(s.regs[index], 0);
    if (m.segment != X86_REG_INVALID) return {};
    if (m.base == X86_REG_RIP)
      return {ValueKind::kConstant, int64_t(insn_->address + insn_->size + m.disp)};
    int base = m.base == X86_REG_INVALID ? kNoGpr : Gpr(m.base, &width);
    if (base == kNoGpr || width != 8) return {};
    Value b = s.regs[base];
    NoteUse(b, 0);
    if (index != kNoGpr) return {};
    switch (b.kind) {
      case ValueKind::kBlockAddress:
      case ValueKind::kStack:
      case ValueKind::kConstant:
        return {b.kind, b.v + m.disp};
      default:
        return {};
    }
  }

  Value Load(const State& s, const cs_x86_op& op) {
    Value at = Address(s, op.mem);
    if (op.size != 8) return {};
    if (at.kind == ValueKind::kBlockAddress) return {ValueKind::kBlockWord, at.v};
    if (at.kind == ValueKind::kStack) return s.Load(at.v);
    return {};
  }

  void Store(State& s, const cs_x86_op& op, Value v) {
    Value at = Address(s, op.mem);
    if (at.kind == ValueKind::kStack) s.Store(at.v, op.size == 8 ? v : Value{});
  }

  void NoteUse(Value v, uint64_t callee) {
    if (v.kind != ValueKind::kBlockWord || v.v < 0) return;
    AddSlot({uint32_t(v.v), CapturedSlotKind::kReleased, 0, callee});
  }

  void AddSlot(CapturedSlot slot) {
    for (uint32_t i = 0; i < out_->count; ++i) {
      CapturedSlot& s = out_->slots[i];
      if (s.offset != slot.offset) continue;
      if (SlotRank(slot.kind) < SlotRank(s.kind)) s = slot;
      return;
    }
    if (out_->count == DisposeAnalysis::kMaxSlots) {
      out_->complete = false;
      return;
    }
    auto* end = out_->slots.data() + out_->count;
    auto* at = std::upper_bound(out_->slots.data(), end, slot.offset,
                                [](uint32_t off, const CapturedSlot& s) { return off < s.offset; });
    std::move_backward(at, end, end + 1);
    *at = slot;
    ++out_->count;
  }

  // A call (or tail call) reaching `target` (0: unknown), with `dispose` already decided.
  void Call(State& s, bool dispose, uint64_t target) {
    Value arg0 = s.regs[kRdi];
    if (dispose) {
      if (arg0.kind == ValueKind::kBlockWord && arg0.v >= 0) {
        Value flags = s.regs[kRsi];
        uint32_t f = flags.kind == ValueKind::kConstant ? uint32_t(flags.v) : 0;
        AddSlot({uint32_t(arg0.v), KindFromFlags(f), f, 0});
      }
    } else if (arg0.kind == ValueKind::kBlockAddress && arg0.v > 0) {
      AddSlot({uint32_t(arg0.v), CapturedSlotKind::kDestroyed, 0, target});
    } else {
      NoteUse(arg0, target);
    }
    for (int r : {0, 1, 2, kRsi, kRdi, 8, 9, 10, 11}) s.regs[r] = {};
  }

  // Classifies the target of a call or jump operand: sets *dispose and returns the callee address
  // (0 if unknown). False for an indirect target that is not a GOT slot.
  bool Target(const State& s, const cs_x86_op& op, bool* dispose, uint64_t* callee) {
    *dispose = false;
    *callee = 0;
    if (op.type == X86_OP_IMM) {
      *callee = uint64_t(op.imm);
      *dispose = a_.IsDisposeTarget(*callee);
      return true;
    }
    if (op.type == X86_OP_MEM && op.mem.base == X86_REG_RIP && op.mem.index == X86_REG_INVALID) {
      *dispose = a_.IsDisposeSlot(insn_->address + insn_->size + op.mem.disp);
      return true;
    }
    if (op.type == X86_OP_REG) {
      Value v = Read(s, op);
      if (v.kind == ValueKind::kConstant) {
        *callee = uint64_t(v.v);
        *dispose = a_.IsDisposeTarget(*callee);
        return true;
      }
      NoteUse(v, 0);
    } else if (op.type == X86_OP_MEM) {
      Address(s, op.mem);
    }
    return false;
  }

  Flow Jump(State& s, const cs_x86_op& op, uint64_t* next) {
    bool dispose = false;
    uint64_t callee = 0;
    bool frame_gone = s.regs[kRsp].kind == ValueKind::kStack && s.regs[kRsp].v == 0;
    if (!Target(s, op, &dispose, &callee)) {
      // With the frame popped, an indirect jump is a tail call (a virtual destructor's); else it
      // is a switch table this walker does not follow.
      if (frame_gone) {
        Call(s, false, 0);
      } else {
        out_->complete = false;
      }
      return Flow::kStop;
    }
    bool tail_call =
        dispose || op.type != X86_OP_IMM || !InWindow(callee) || a_.PltSlot(callee) != 0 ||
        (frame_gone && s.regs[kRdi].kind == ValueKind::kBlockAddress && s.regs[kRdi].v > 0);
    if (tail_call) {
      Call(s, dispose, callee);
      return Flow::kStop;
    }
    *next = callee;
    return Flow::kJump;
  }

  void Adjust(State& s, const cs_x86& x, int64_t sign) {
    Value dst = Read(s, x.operands[0]);
    Value amount = Read(s, x.operands[1]);
    bool movable = dst.kind == ValueKind::kBlockAddress || dst.kind == ValueKind::kStack ||
                   dst.kind == ValueKind::kConstant;
    if (x.operands[0].type == X86_OP_REG && x.operands[0].size == 8 && movable &&
        amount.kind == ValueKind::kConstant) {
      Write(s, x.operands[0], {dst.kind, dst.v + sign * amount.v});
    } else {
      Generic(s);
    }
  }

  void PushValue(State& s, Value v) {
    Value& sp = s.regs[kRsp];
    if (sp.kind != ValueKind::kStack) return;
    sp.v -= 8;
    s.Store(sp.v, v);
  }

  Value PopValue(State& s) {
    Value& sp = s.regs[kRsp];
    if (sp.kind != ValueKind::kStack) return {};
    Value v = s.Load(sp.v);
    sp.v += 8;
    return v;
  }

  // Any other instruction: what it writes becomes unknown; a stack word it writes is forgotten.
  void Generic(State& s) {
    const cs_x86& x = insn_->detail->x86;
    for (uint8_t i = 0; i < x.op_count; ++i) {
      const cs_x86_op& op = x.operands[i];
      if (op.type != X86_OP_MEM) continue;
      Value at = Address(s, op.mem);
      if ((op.access & CS_AC_WRITE) && at.kind == ValueKind::kStack) s.Store(at.v, {});
    }
    cs_regs read{}, written{};
    uint8_t read_count = 0, written_count = 0;
    if (cs_regs_access(a_.handle_, insn_, read, &read_count, written, &written_count) !=
        CS_ERR_OK) {
      for (uint8_t i = 0; i < x.op_count; ++i) Write(s, x.operands[i], {});
      return;
    }
    for (uint8_t i = 0; i < written_count; ++i) {
      int width = 0;
      int r = Gpr(written[i], &width);
      if (r != kNoGpr) s.regs[r] = {};
    }
  }

  Flow Step(State& s, uint64_t* next) {
    const cs_x86& x = insn_->detail->x86;
    const cs_x86_op* ops = x.operands;
    unsigned id = insn_->id;
    if (IsConditionalJump(id)) {
      if (ops[0].type == X86_OP_IMM) Push(uint64_t(ops[0].imm), s);
      return Flow::kNext;
    }
    switch (id) {
      case X86_INS_RET:
      case X86_INS_RETF:
      case X86_INS_INT3:
      case X86_INS_UD2:
      case X86_INS_HLT:
        return Flow::kStop;
      case X86_INS_JMP:
        return Jump(s, ops[0], next);
      case X86_INS_CALL: {
        bool dispose = false;
        uint64_t callee = 0;
        Target(s, ops[0], &dispose, &callee);
        Call(s, dispose, callee);
        return Flow::kNext;
      }
      case X86_INS_MOV:
      case X86_INS_MOVABS:
        if (x.op_count != 2) break;
        if (ops[0].type == X86_OP_MEM) {
          Store(s, ops[0], Read(s, ops[1]));
        } else {
          Write(s, ops[0], ops[1].type == X86_OP_MEM ? Load(s, ops[1]) : Read(s, ops[1]));
        }
        return Flow::kNext;
      case X86_INS_LEA:
        Write(s, ops[0], ops[0].size == 8 ? Address(s, ops[1].mem) : Value{});
        return Flow::kNext;
      case X86_INS_ADD:
      case X86_INS_SUB:
        if (x.op_count != 2) break;
        if (id == X86_INS_SUB && ops[0].type == X86_OP_REG && ops[1].type == X86_OP_REG &&
            ops[0].reg == ops[1].reg) {
          Write(s, ops[0], {ValueKind::kConstant, 0});
          return Flow::kNext;
        }
        Adjust(s, x, id == X86_INS_ADD ? 1 : -1);
        return Flow::kNext;
      case X86_INS_XOR:
        if (x.op_count == 2 && ops[0].type == X86_OP_REG && ops[1].type == X86_OP_REG &&
            ops[0].reg == ops[1].reg) {
          Write(s, ops[0], {ValueKind::kConstant, 0});
          return Flow::kNext;
        }
        break;
      case X86_INS_PUSH:
        PushValue(s, ops[0].type == X86_OP_MEM ? Load(s, ops[0]) : Read(s, ops[0]));
        return Flow::kNext;
      case X86_INS_POP: {
        Value v = PopValue(s);
        if (ops[0].type == X86_OP_REG) Write(s, ops[0], v);
        return Flow::kNext;
      }
      case X86_INS_LEAVE:
        s.regs[kRsp] = s.regs[kRbp];
        s.regs[kRbp] = PopValue(s);
        return Flow::kNext;
      default:
        break;
    }
    Generic(s);
    return Flow::kNext;
  }

  const DisposeHelperAnalyzer& a_;
  uint64_t helper_;
  DisposeAnalysis* out_;
  cs_insn* insn_;
  std::bitset<kWindowBytes> visited_;
  std::array<Pending, 32> pending_;
  size_t pending_count_ = 0;
};

DisposeHelperAnalyzer::DisposeHelperAnalyzer(Arch arch, std::span<const uint64_t> dispose,
                                             std::span<const uint64_t> dispose_slots,
                                             std::span<const CodeRange> code)
    : arch_(arch), dispose_(dispose), dispose_slots_(dispose_slots), code_(code) {
  if (arch != Arch::kX86_64) return;
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return;
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  insn_ = cs_malloc(handle);
  probe_ = cs_malloc(handle);
  if (insn_ == nullptr || probe_ == nullptr) {
    if (insn_ != nullptr) cs_free(static_cast<cs_insn*>(insn_), 1);
    if (probe_ != nullptr) cs_free(static_cast<cs_insn*>(probe_), 1);
    insn_ = probe_ = nullptr;
    cs_close(&handle);
    return;
  }
  handle_ = handle;
}

DisposeHelperAnalyzer::~DisposeHelperAnalyzer() {
  if (handle_ == 0) return;
  cs_free(static_cast<cs_insn*>(insn_), 1);
  cs_free(static_cast<cs_insn*>(probe_), 1);
  csh handle = handle_;
  cs_close(&handle);
}

const CodeRange* DisposeHelperAnalyzer::FindCode(uint64_t address) const {
  auto it = std::upper_bound(code_.begin(), code_.end(), address,
                             [](uint64_t a, const CodeRange& r) { return a < r.begin; });
  if (it == code_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

bool DisposeHelperAnalyzer::IsDisposeSlot(uint64_t slot) const {
  return std::binary_search(dispose_slots_.begin(), dispose_slots_.end(), slot);
}

bool DisposeHelperAnalyzer::IsDisposeTarget(uint64_t target) const {
  if (target == 0) return false;
  if (std::binary_search(dispose_.begin(), dispose_.end(), target)) return true;
  uint64_t slot = PltSlot(target);
  return slot != 0 && IsDisposeSlot(slot);
}

uint64_t DisposeHelperAnalyzer::PltSlot(uint64_t target) const {
  // Decoded into probe_, so the walker's current instruction (insn_) is kept.
  auto* probe = static_cast<cs_insn*>(probe_);
  uint64_t at = target;
  for (int i = 0; i < 2; ++i) {
    const CodeRange* range = FindCode(at);
    if (handle_ == 0 || range == nullptr) return 0;
    const uint8_t* code = reinterpret_cast<const uint8_t*>(at);
    size_t size = std::min<uint64_t>(16, range->end - at);
    uint64_t address = at;
    if (!cs_disasm_iter(handle_, &code, &size, &address, probe)) return 0;
    if (probe->id == X86_INS_ENDBR64 && i == 0) {
      at += probe->size;
      continue;
    }
    const cs_x86& x = probe->detail->x86;
    if (probe->id != X86_INS_JMP || x.op_count != 1 || x.operands[0].type != X86_OP_MEM) return 0;
    const x86_op_mem& m = x.operands[0].mem;
    if (m.base != X86_REG_RIP || m.index != X86_REG_INVALID) return 0;
    return probe->address + probe->size + m.disp;
  }
  return 0;
}

DisposeAnalysis DisposeHelperAnalyzer::Analyze(uint64_t helper) const {
  DisposeAnalysis out;
  if (handle_ == 0 || arch_ != Arch::kX86_64) {
    out.complete = false;
    return out;
  }
  X86Walker walker(*this, helper, &out);
  walker.Run();
  return out;
}

}  // namespace heapgraph::scanner::types
