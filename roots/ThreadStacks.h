// roots/: the part of each captured thread's stack that a scanner must read.
//
// A thread's live stack runs from its stack pointer up to the top of the mapping that contains
// it (stacks grow down on x86-64 and aarch64). On x86-64 leaf code may also keep data in the
// 128-byte red zone below SP, so the range starts at SP - ThreadInfo::kRedZone. Invariants of
// every Range: begin >= SP - kRedZone (never lower), begin >= the mapping's start, end is the
// mapping's end, begin <= end. A thread whose SP lies in no mapping gets an empty range.
//
// For the thread that stopped the world (is_caller) the range reflects its SP at StopAll(); it
// keeps running, so a scanner on that thread should rather scan from its current SP.
//
// A thread's SP need not lie in its own stack: it may run a signal handler on a sigaltstack or a
// swapcontext fiber (or a leak check's own stack). OwnStack() finds the stack it returns to, which
// still holds its live frames; a scanner must read it whole then (as LeakSanitizer does), besides
// the range around SP.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "roots/ProcessMappings.h"
#include "roots/ThreadInfo.h"

namespace heapgraph::roots {

class ThreadStacks {
 public:
  struct Range {
    pid_t tid = 0;
    uintptr_t begin = 0;  // inclusive
    uintptr_t end = 0;    // exclusive
    // The mapping holding SP, or nullptr (then begin == end == 0). Points into the
    // ProcessMappings given to Compute(), valid as long as it is.
    const ProcessMappings::Mapping* mapping = nullptr;

    uintptr_t size() const { return end - begin; }
    bool empty() const { return begin == end; }
  };

  // Sizes the result so that Compute() for up to `threads` threads does not allocate.
  void Reserve(size_t threads) { ranges_.reserve(threads); }
  // One Range per thread, in the order given.
  void Compute(std::span<const ThreadInfo> threads, const ProcessMappings& mappings);
  std::span<const Range> ranges() const { return ranges_; }

  static Range ForThread(const ThreadInfo& thread, const ProcessMappings& mappings);
  // The mapping of `thread`'s own stack, wherever its SP is: "[stack]" for the main thread
  // (is_main); for another thread (x86-64), the mapping whose last `static_tls_size` bytes hold
  // its thread control block (fs_base): glibc puts struct pthread at the top of every thread's
  // stack, the one it maps and one given with pthread_attr_setstack alike. nullptr when unknown:
  // static_tls_size 0 (glibc's static TLS size, TCB included), a stack given inside a larger
  // mapping (the TCB is then not at the mapping's top), or aarch64 (ThreadInfo holds no
  // TPIDR_EL0).
  static const ProcessMappings::Mapping* OwnStack(const ThreadInfo& thread,
                                                  const ProcessMappings& mappings,
                                                  uint64_t static_tls_size);

 private:
  std::vector<Range> ranges_;
};

}  // namespace heapgraph::roots
