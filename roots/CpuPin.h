// roots/: keeps the calling thread, and the helper task it clones, on the CPU the thread runs on
// while it hands a stop to that helper and waits for it (ThreadCapture, a program whose only
// thread is the caller).
//
// Why: a task cloned onto another CPU, and a thread woken on another CPU, each cost an
// inter-processor interrupt; where that CPU is idle in a virtual machine it must first be woken
// from its halt (an exit to the hypervisor). A small check hands work to its helper and back once
// each: ≈ 0.35 ms of a 2.5 ms check measured on a 2-vCPU Firecracker VM, against a switch on one
// CPU when both are pinned to it. Only where the two never run at once: pinned, they share the CPU.
//
// Invariants: Pin changes nothing and returns false when the kernel does not tell the CPU or the
// set; Unpin gives back exactly the set Pin read (a no-op when not pinned). A task cloned while
// the thread was pinned inherits the one-CPU set: RestoreIn, called in that task, gives it the
// saved set (a snapshot process's marking must not be confined). Raw system calls only: no
// allocation, no errno, usable in the ptrace helper and in a snapshot process.
#pragma once

#include <sched.h>

namespace heapgraph::roots {

class CpuPin {
 public:
  // Confines the calling thread to the CPU it runs on; true if it did.
  bool Pin();
  // Gives the calling thread the CPU set it had before Pin.
  void Unpin();
  // In a task cloned by the pinned thread (or by a task it cloned): the set it had before Pin.
  void RestoreIn() const;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t saved_;
  unsigned long saved_bytes_ = 0;  // what sched_getaffinity wrote
  bool pinned_ = false;
};

}  // namespace heapgraph::roots
