#include "heap/platform/DwarfExpression.h"

#include <cstring>

#include "heap/platform/ByteReader.h"

namespace heapgraph::DwarfExpression {
namespace {

// The operations read here (DWARF 5 section 7.7.1).
enum Op : uint8_t {
  kAddr = 0x03,
  kDeref = 0x06,
  kConst1u = 0x08,
  kConst1s = 0x09,
  kConst2u = 0x0a,
  kConst2s = 0x0b,
  kConst4u = 0x0c,
  kConst4s = 0x0d,
  kConst8u = 0x0e,
  kConst8s = 0x0f,
  kConstu = 0x10,
  kConsts = 0x11,
  kDup = 0x12,
  kDrop = 0x13,
  kOver = 0x14,
  kPick = 0x15,
  kSwap = 0x16,
  kRot = 0x17,
  kAbs = 0x19,
  kAnd = 0x1a,
  kDiv = 0x1b,
  kMinus = 0x1c,
  kMod = 0x1d,
  kMul = 0x1e,
  kNeg = 0x1f,
  kNot = 0x20,
  kOr = 0x21,
  kPlus = 0x22,
  kPlusUconst = 0x23,
  kShl = 0x24,
  kShr = 0x25,
  kShra = 0x26,
  kXor = 0x27,
  kBra = 0x28,
  kEq = 0x29,
  kGe = 0x2a,
  kGt = 0x2b,
  kLe = 0x2c,
  kLt = 0x2d,
  kNe = 0x2e,
  kSkip = 0x2f,
  kLit0 = 0x30,
  kLit31 = 0x4f,
  kBreg0 = 0x70,
  kBreg31 = 0x8f,
  kBregx = 0x92,
  kDerefSize = 0x94,
  kNop = 0x96,
};

class Machine {
 public:
  Machine(const uint8_t* begin, const uint8_t* end, const FrameRegisters& registers,
          StackWindow window)
      : begin_(begin), reader_{begin, end}, registers_(registers), window_(window) {}

  bool Push(uintptr_t value) {
    if (depth_ == kMaxStack) return false;
    stack_[depth_++] = value;
    return true;
  }

  bool Run(uintptr_t* result) {
    for (int steps = 0; reader_.at < reader_.end; ++steps) {
      if (steps == kMaxSteps || !Step() || reader_.bad) return false;
    }
    if (depth_ == 0) return false;
    *result = stack_[depth_ - 1];
    return true;
  }

 private:
  // The operand just read, unless the block ran out.
  bool Read() const { return !reader_.bad; }
  template <typename T>
  bool PushFixed() {
    T value = reader_.Fixed<T>();
    return Read() && Push(static_cast<uintptr_t>(static_cast<int64_t>(value)));
  }
  bool Pop(uintptr_t* value) {
    if (depth_ == 0) return false;
    *value = stack_[--depth_];
    return true;
  }
  bool Register(uint64_t reg, int64_t offset) {
    return Read() && registers_.Has(reg) &&
           Push(registers_.value[reg] + static_cast<uintptr_t>(offset));
  }
  bool Jump(int16_t delta) {
    const uint8_t* target = reader_.at + delta;
    if (!Read() || target < begin_ || target > reader_.end) return false;
    reader_.at = target;
    return true;
  }
  bool Binary(uint8_t op);
  bool Step();

  const uint8_t* begin_;
  ByteReader reader_;
  const FrameRegisters& registers_;
  StackWindow window_;
  uintptr_t stack_[kMaxStack];
  int depth_ = 0;
};

bool Machine::Binary(uint8_t op) {
  uintptr_t b, a;
  if (!Pop(&b) || !Pop(&a)) return false;
  const auto sa = static_cast<intptr_t>(a), sb = static_cast<intptr_t>(b);
  switch (op) {
    case kAnd:
      return Push(a & b);
    case kOr:
      return Push(a | b);
    case kXor:
      return Push(a ^ b);
    case kPlus:
      return Push(a + b);
    case kMinus:
      return Push(a - b);
    case kMul:
      return Push(a * b);
    case kDiv:
      if (b == 0 || (sa == INTPTR_MIN && sb == -1)) return false;
      return Push(static_cast<uintptr_t>(sa / sb));
    case kMod:
      if (b == 0) return false;
      return Push(a % b);
    case kShl:
      return Push(b >= 64 ? 0 : a << b);
    case kShr:
      return Push(b >= 64 ? 0 : a >> b);
    case kShra:
      return Push(static_cast<uintptr_t>(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b));
    case kEq:
      return Push(sa == sb);
    case kGe:
      return Push(sa >= sb);
    case kGt:
      return Push(sa > sb);
    case kLe:
      return Push(sa <= sb);
    case kLt:
      return Push(sa < sb);
    case kNe:
      return Push(sa != sb);
    default:
      return false;
  }
}

bool Machine::Step() {
  uint8_t op = reader_.Fixed<uint8_t>();
  if (op >= kLit0 && op <= kLit31) return Push(op - kLit0);
  if (op >= kBreg0 && op <= kBreg31) {
    int64_t offset = reader_.Sleb();
    return Register(op - kBreg0, offset);
  }
  uintptr_t a = 0, b = 0, c = 0;
  switch (op) {
    case kAddr:
      return PushFixed<uint64_t>();
    case kConst1u:
      return PushFixed<uint8_t>();
    case kConst1s:
      return PushFixed<int8_t>();
    case kConst2u:
      return PushFixed<uint16_t>();
    case kConst2s:
      return PushFixed<int16_t>();
    case kConst4u:
      return PushFixed<uint32_t>();
    case kConst4s:
      return PushFixed<int32_t>();
    case kConst8u:
    case kConst8s:
      return PushFixed<uint64_t>();
    case kConstu: {
      uint64_t value = reader_.Uleb();
      return Read() && Push(value);
    }
    case kConsts: {
      int64_t value = reader_.Sleb();
      return Read() && Push(static_cast<uintptr_t>(value));
    }
    case kDup:
      return depth_ > 0 && Push(stack_[depth_ - 1]);
    case kDrop:
      return Pop(&a);
    case kOver:
      return depth_ > 1 && Push(stack_[depth_ - 2]);
    case kPick: {
      uint8_t index = reader_.Fixed<uint8_t>();
      return Read() && index < depth_ && Push(stack_[depth_ - 1 - index]);
    }
    case kSwap:
      if (!Pop(&a) || !Pop(&b)) return false;
      return Push(a) && Push(b);
    case kRot:  // top three: a b c (c on top) -> c a b
      if (!Pop(&c) || !Pop(&b) || !Pop(&a)) return false;
      return Push(c) && Push(a) && Push(b);
    case kDeref:
      return Pop(&a) && window_.Read(a, sizeof(uintptr_t), &b) && Push(b);
    case kDerefSize: {
      uint8_t size = reader_.Fixed<uint8_t>();
      return Read() && Pop(&a) && window_.Read(a, size, &b) && Push(b);
    }
    case kAbs:
      if (!Pop(&a)) return false;
      return Push(static_cast<intptr_t>(a) < 0 ? 0 - a : a);
    case kNeg:
      return Pop(&a) && Push(0 - a);
    case kNot:
      return Pop(&a) && Push(~a);
    case kPlusUconst: {
      uint64_t value = reader_.Uleb();
      return Read() && Pop(&a) && Push(a + value);
    }
    case kBregx: {
      uint64_t reg = reader_.Uleb();
      int64_t offset = reader_.Sleb();
      return Register(reg, offset);
    }
    case kSkip:
      return Jump(reader_.Fixed<int16_t>());
    case kBra: {
      int16_t delta = reader_.Fixed<int16_t>();
      if (!Read() || !Pop(&a)) return false;
      return a == 0 || Jump(delta);
    }
    case kNop:
      return true;
    default:
      return Binary(op);
  }
}

}  // namespace

bool Evaluate(const uint8_t* begin, const uint8_t* end, const FrameRegisters& registers,
              uintptr_t initial, bool push_initial, StackWindow window, uintptr_t* result) {
  if (begin == nullptr || end < begin) return false;
  Machine machine(begin, end, registers, window);
  if (push_initial && !machine.Push(initial)) return false;
  return machine.Run(result);
}

}  // namespace heapgraph::DwarfExpression
