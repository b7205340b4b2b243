#include "heap/platform/DwarfWalk.h"

#include <sys/uio.h>
#include <unistd.h>

#include "heap/platform/EhFrameRules.h"

namespace heapgraph::DwarfWalk {
namespace {

constexpr uintptr_t kWord = sizeof(uintptr_t);

}  // namespace

bool FramePointerStep(FrameRegisters* registers, uintptr_t high) {
  if (!registers->Has(FrameRegisters::kRbp)) return false;
  const uintptr_t rbp = registers->value[FrameRegisters::kRbp];
  if (rbp == 0 || rbp < registers->sp() || (rbp & (kWord - 1)) != 0 || rbp > high - 2 * kWord) {
    return false;
  }
  uintptr_t words[2];
  iovec local{words, sizeof(words)};
  iovec remote{reinterpret_cast<void*>(rbp), sizeof(words)};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof(words))) {
    return false;
  }
  registers->Set(FrameRegisters::kRbp, words[0]);
  registers->Set(FrameRegisters::kRip, words[1]);
  registers->Set(FrameRegisters::kRsp, rbp + 2 * kWord);
  return true;
}

Next StepFrame(FrameRegisters* registers, Position* position) {
  const uintptr_t ip = registers->ip(), sp = registers->sp();
  const uintptr_t low = position->interrupted && sp >= kRedZone ? sp - kRedZone : sp;
  switch (
      EhFrameRules::Step(position->interrupted ? ip : ip - 1, registers, {low, position->high})) {
    case EhFrameRules::Stepped::kStepped:
      position->interrupted = false;
      return registers->sp() < sp + kWord || registers->sp() > position->high ? Next::kEnd
                                                                              : Next::kStepped;
    case EhFrameRules::Stepped::kSignalFrame:
      position->EnterInterrupted(registers->sp());
      return Next::kStepped;
    case EhFrameRules::Stepped::kNoFde:
      position->interrupted = false;
      if (!registers->Has(FrameRegisters::kRbp)) return Next::kFailed;
      return FramePointerStep(registers, position->high) ? Next::kStepped : Next::kEnd;
    case EhFrameRules::Stepped::kEnd:
      return Next::kEnd;
    case EhFrameRules::Stepped::kFailed:
      break;
  }
  return Next::kFailed;
}

int Walk(FrameRegisters registers, uintptr_t* out, uintptr_t* stack_pointers, int size) {
  Position position{false, WindowEnd(registers.sp())};
  int n = 0;
  while (n < size && registers.Has(FrameRegisters::kRip) && registers.Has(FrameRegisters::kRsp) &&
         registers.ip() != 0) {
    out[n] = registers.ip();
    if (stack_pointers != nullptr) stack_pointers[n] = registers.sp();
    if (++n == size || StepFrame(&registers, &position) != Next::kStepped) break;
  }
  return n;
}

}  // namespace heapgraph::DwarfWalk
