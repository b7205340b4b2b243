#include "check/GuardedStack.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace heapgraph::report {

GuardedStack::GuardedStack(size_t size) : size_(size) {
  long mapped = syscall(SYS_mmap, nullptr, size + kGuard, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mapped < 0 && mapped > -4096) return;
  mapping_ = reinterpret_cast<char*>(mapped);
  syscall(SYS_mprotect, mapping_, kGuard, PROT_NONE);
}

GuardedStack::~GuardedStack() {
  if (mapping_ != nullptr && !leave_to_exit_) syscall(SYS_munmap, mapping_, size_ + kGuard);
}

}  // namespace heapgraph::report
