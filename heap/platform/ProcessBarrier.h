// heap/platform/: a memory barrier on every running thread of this process at once (Linux
// membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED), so that a hot path run by one thread needs only
// compiler barriers while a rare other thread that must exclude it pays the whole cost (the
// asymmetric Dekker pattern; heap/store/SlabShard's owner thread and the threads that freeze its
// shard). Contract: a thread stores a flag, then (compiler barrier) loads another; a thread that
// stores the other, calls Issue(), then loads the flag sees the first thread's store, or the first
// thread's load sees its store. Register() once per process before Available() is true; a forked
// child inherits the registration with its copy of the address space (Linux copies it; should a
// kernel not, Issue() registers the child when its barrier is refused). Raw system calls only,
// never allocates: usable inside malloc hooks.
#pragma once

namespace heapgraph {

class ProcessBarrier {
 public:
  // Registers this process for expedited barriers. False (and Available() false) where the
  // kernel has no such command (before Linux 4.14, or a seccomp filter refuses it).
  static bool Register();
  static bool Available();
  // A full memory barrier on every thread of the process that is running now (threads that are
  // not running pass through one when they are scheduled). Only after Register() succeeded (in
  // this process or the one it was forked from).
  static void Issue();
};

}  // namespace heapgraph
