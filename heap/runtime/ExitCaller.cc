#include "heap/runtime/ExitCaller.h"

#include <dlfcn.h>
#include <stdlib.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "heap/platform/EhFrameRules.h"

namespace heapgraph::ExitCaller {
namespace {

struct CodeRange {
  uintptr_t begin = 0, end = 0;
  bool Holds(uintptr_t address) const { return address >= begin && address < end; }
};

// The code of the function at `function`, from its FDE (EhFrameRules: a binary search of
// .eh_frame_hdr, where dladdr would read the object's whole symbol table); empty if unknown.
CodeRange FunctionCode(void* function) {
  CodeRange code;
  if (function == nullptr ||
      !EhFrameRules::FunctionRange(reinterpret_cast<uintptr_t>(function), &code.begin, &code.end)) {
    return {};
  }
  return code;
}

}  // namespace

uint64_t StackPointer() {
  // glibc's exit, and the recorder's own exit() wrapper (heap/runtime/SessionInterposer) through
  // which a program's call to exit() goes.
  void (*wrapper)(int) = &exit;
  const CodeRange exits[] = {FunctionCode(dlsym(RTLD_NEXT, "exit")),
                             FunctionCode(reinterpret_cast<void*>(wrapper))};
  unw_context_t context;
  unw_cursor_t cursor;
  if (exits[0].begin == 0 || unw_getcontext(&context) != 0 ||
      unw_init_local(&cursor, &context) != 0) {
    return 0;
  }
  constexpr int kMaxFrames = 256;
  bool inside = false;  // the frames walked so far reached exit's
  for (int i = 0; i < kMaxFrames && unw_step(&cursor) > 0; ++i) {
    unw_word_t ip = 0, sp = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0) {
      return 0;
    }
    // A return address points after the call: ip - 1 lies inside the calling function.
    const bool in_exit = exits[0].Holds(ip - 1) || exits[1].Holds(ip - 1);
    if (inside && !in_exit) return sp;  // the first frame above exit's: its caller's
    inside = inside || in_exit;
  }
  return 0;
}

}  // namespace heapgraph::ExitCaller
