#include "heap/runtime/HomeStack.h"

#include <sys/syscall.h>
#include <unistd.h>

extern "C" void* __libc_stack_end;  // ld.so: the main thread's initial stack pointer

namespace heapgraph {

void HomeStack::Prove(uintptr_t start_sp, uintptr_t end_sp, const void* anchor) {
  if (top_ == 0) {
    bool main_thread = syscall(SYS_gettid) == getpid();
    top_ = main_thread ? reinterpret_cast<uintptr_t>(__libc_stack_end)
                       : reinterpret_cast<uintptr_t>(anchor);
  }
  if (end_sp > top_ || end_sp < top_ - kTopWindow || start_sp > end_sp) return;
  if (high_ == 0 || start_sp < low_) low_ = start_sp;
  high_ = top_;
}

}  // namespace heapgraph
