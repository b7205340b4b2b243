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

int Walk(FrameRegisters registers, uintptr_t* out, uintptr_t* stack_pointers, int size) {
  uintptr_t high = WindowEnd(registers.sp());
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
        high = WindowEnd(registers.sp());
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
