#include "report/FreshStack.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

namespace heapgraph::report {
namespace {

struct Call {
  void (*body)(void*);
  void* argument;
};
thread_local Call* t_call = nullptr;

void Trampoline() {
  t_call->body(t_call->argument);
}

constexpr size_t kGuard = 4096;

}  // namespace

bool FreshStack::Run(void (*body)(void*), void* argument, size_t size) {
  long mapped = syscall(SYS_mmap, nullptr, size + kGuard, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mapped < 0 && mapped > -4096) return false;
  auto* base = reinterpret_cast<char*>(mapped);
  syscall(SYS_mprotect, base, kGuard, PROT_NONE);  // overflow faults instead of corrupting
  Call call = {body, argument};
  Call* outer = t_call;
  t_call = &call;
  ucontext_t back, fresh;
  getcontext(&fresh);
  fresh.uc_stack.ss_sp = base + kGuard;
  fresh.uc_stack.ss_size = size;
  fresh.uc_link = &back;
  makecontext(&fresh, &Trampoline, 0);
  swapcontext(&back, &fresh);
  t_call = outer;
  syscall(SYS_munmap, base, size + kGuard);
  return true;
}

}  // namespace heapgraph::report
