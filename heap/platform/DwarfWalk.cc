#include "heap/platform/DwarfWalk.h"

#include <sys/uio.h>
#include <unistd.h>

#include "heap/platform/EhFrameRules.h"

namespace heapgraph::DwarfWalk {
namespace {

constexpr uintptr_t kWord = sizeof(uintptr_t);
// x86-64's red zone: a frame interrupted in its epilogue has rules for registers it already
// popped, whose slots lie just below its stack pointer (the kernel leaves these 128 bytes alone
// when it pushes the signal frame).
constexpr uintptr_t kRedZone = 128;

uintptr_t Limit(uintptr_t sp) {
  return sp > ~uintptr_t{0} - kMaxStackSpan ? ~uintptr_t{0} : sp + kMaxStackSpan;
}

// A frame without an FDE, by its frame pointer: [rbp] the caller's rbp, [rbp + 8] the return
// address, the caller's stack pointer rbp + 16. False at rbp == 0 or when the words cannot be
// read (process_vm_readv fails instead of faulting on an unmapped or protected page).
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

}  // namespace

int Walk(FrameRegisters registers, uintptr_t* out, uintptr_t* stack_pointers, int size) {
  uintptr_t high = Limit(registers.sp());
  bool interrupted = false;  // the frame was interrupted by a signal: its rip is exact
  int n = 0;
  while (n < size && registers.Has(FrameRegisters::kRip) && registers.Has(FrameRegisters::kRsp) &&
         registers.ip() != 0) {
    const uintptr_t ip = registers.ip(), sp = registers.sp();
    out[n] = ip;
    if (stack_pointers != nullptr) stack_pointers[n] = sp;
    if (++n == size) break;
    const uintptr_t low = interrupted && sp >= kRedZone ? sp - kRedZone : sp;
    switch (EhFrameRules::Step(interrupted ? ip : ip - 1, &registers, low, high)) {
      case EhFrameRules::Stepped::kStepped:
        interrupted = false;
        if (registers.sp() < sp + kWord || registers.sp() > high) return n;
        break;
      case EhFrameRules::Stepped::kSignalFrame:
        interrupted = true;
        high = Limit(registers.sp());
        break;
      case EhFrameRules::Stepped::kNoFde:
        interrupted = false;
        if (!FramePointerStep(&registers, high)) return n;
        break;
      case EhFrameRules::Stepped::kEnd:
      case EhFrameRules::Stepped::kFailed:
        return n;
    }
  }
  return n;
}

}  // namespace heapgraph::DwarfWalk
