// heap/runtime/: the threads inside a leak-check call, each listed with the program's frame that
// made the call. Below that frame a listed thread runs only heapgraph's frames: waiting for the
// check lock (heap/runtime/CheckLock), on its way in, or on its way out after the lock was
// released. A check that stops such a thread cuts those frames from its stack
// (RootRanges::ExcludeWaitingCheckFrames): their unwritten slots keep stale words (block addresses
// left at that depth by the recorder's hooks or a signal frame's saved registers) that would hide
// leaks. Invariant: a thread is listed only while every frame below its listed frame is
// heapgraph's, so it is unlisted before it returns to the program. The outermost call lists the
// thread; a nested one (the lock's own listing, inside a public check function) leaves the outer,
// higher frame in place. At most kSlots threads are listed; the others are scanned whole, as
// before. No allocation; read while the world is stopped.
#pragma once

#include <cstdint>

#include "heap/plugin/ScanInterface.h"

namespace heapgraph {

namespace CheckEntrants {

inline constexpr int kSlots = 64;

// Lists the calling thread with `program_stack_pointer` (0: lists nothing). False when nothing
// was listed by this call: the thread was listed already (its outer frame stands), or every
// slot is taken.
bool List(uint64_t program_stack_pointer);
// Ends the listing that List returned true for.
void Unlist();

// The slots (a slot's tid is positive only once its stack pointer is stored).
const HeapgraphCheckEntrant* Slots();

// fork() child: only the forking thread survived, with a new tid; nothing is listed.
void AfterForkChild();

}  // namespace CheckEntrants

// Lists the calling thread for its lifetime (when no outer call has).
class CheckEntrant {
 public:
  explicit CheckEntrant(uint64_t program_stack_pointer)
      : listed_(CheckEntrants::List(program_stack_pointer)) {}
  ~CheckEntrant() {
    if (listed_) CheckEntrants::Unlist();
  }
  CheckEntrant(const CheckEntrant&) = delete;
  CheckEntrant& operator=(const CheckEntrant&) = delete;

 private:
  bool listed_;
};

}  // namespace heapgraph
