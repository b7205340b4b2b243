#include "check/FreshStack.h"

#include <ucontext.h>

#include "check/GuardedStack.h"

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

}  // namespace

bool FreshStack::Run(void (*body)(void*), void* argument, size_t size, bool process_exits) {
  GuardedStack stack(size);
  if (!stack.valid()) return false;
  if (process_exits) stack.LeaveToExit();
  Call call = {body, argument};
  Call* outer = t_call;
  t_call = &call;
  ucontext_t back, fresh;
  getcontext(&fresh);
  fresh.uc_stack.ss_sp = stack.base();
  fresh.uc_stack.ss_size = stack.size();
  fresh.uc_link = &back;
  makecontext(&fresh, &Trampoline, 0);
  swapcontext(&back, &fresh);
  t_call = outer;
  return true;
}

}  // namespace heapgraph::report
