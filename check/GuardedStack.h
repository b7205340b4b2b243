// check/: a stack for code the leak check runs off the program's own stack (FreshStack,
// SideThread). Mapped and unmapped with raw syscalls, so the recorder's mmap hook never records
// it and no later scan finds it as a mapping of the program's; a PROT_NONE guard page below it
// makes an overflow fault instead of corrupting memory. Includes nothing from heapgraph.
#pragma once

#include <cstddef>

namespace heapgraph::report {

class GuardedStack {
 public:
  // Maps `size` usable bytes plus the guard page; valid() is false if the mapping failed.
  explicit GuardedStack(size_t size);
  ~GuardedStack();
  GuardedStack(const GuardedStack&) = delete;
  GuardedStack& operator=(const GuardedStack&) = delete;

  bool valid() const { return mapping_ != nullptr; }
  // The stack stays mapped after destruction: the process is about to exit, whose teardown unmaps
  // everything at once (an munmap now would flush the TLB of every other core the process ran on,
  // one IPI each).
  void LeaveToExit() { leave_to_exit_ = true; }
  // The lowest usable byte (just above the guard page) and the usable size.
  char* base() const { return mapping_ + kGuard; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kGuard = 4096;
  char* mapping_ = nullptr;  // guard page first
  size_t size_;
  bool leave_to_exit_ = false;
};

}  // namespace heapgraph::report
