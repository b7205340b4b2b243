#include "heap/runtime/CheckEntrants.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace heapgraph::CheckEntrants {
namespace {

HeapgraphCheckEntrant g_slots[kSlots] = {};

// This thread's kernel tid (0: not read yet), kept so that listing is a few stores and no
// system call; reset in a fork child, whose thread has a new tid.
__thread long t_tid __attribute__((tls_model("initial-exec"))) = 0;
// This thread is listed.
__thread bool t_listed __attribute__((tls_model("initial-exec"))) = false;

long ThisThread() {
  if (t_tid == 0) t_tid = syscall(SYS_gettid);
  return t_tid;
}

}  // namespace

// The slot is claimed with -tid first: a reader (the stopped world's scan) takes only positive
// tids, whose stack pointer is already stored.
// t_listed is set first, so a check started by a signal handler that interrupts the listing
// takes a slot of its own at no point (its Unlist would clear this one too).
bool List(uint64_t program_stack_pointer) {
  if (program_stack_pointer == 0 || t_listed) return false;
  t_listed = true;
  const long self = ThisThread();
  for (HeapgraphCheckEntrant& slot : g_slots) {
    int64_t free_slot = 0;
    if (__atomic_compare_exchange_n(&slot.tid, &free_slot, -self, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      __atomic_store_n(&slot.stack_pointer, program_stack_pointer, __ATOMIC_RELAXED);
      __atomic_store_n(&slot.tid, self, __ATOMIC_RELEASE);
      return true;
    }
  }
  t_listed = false;
  return false;
}

void Unlist() {
  const long self = ThisThread();
  for (HeapgraphCheckEntrant& slot : g_slots) {
    if (__atomic_load_n(&slot.tid, __ATOMIC_RELAXED) == self) {
      __atomic_store_n(&slot.tid, 0, __ATOMIC_RELEASE);
    }
  }
  t_listed = false;
}

const HeapgraphCheckEntrant* Slots() {
  return g_slots;
}

// Only what differs is written: every page of the parent's is shared copy-on-write with a forked
// child until one of them writes it, and a write of the value already there still copies it.
void AfterForkChild() {
  for (HeapgraphCheckEntrant& slot : g_slots) {
    if (slot.tid != 0) slot.tid = 0;
  }
  if (t_tid != 0) t_tid = 0;
  if (t_listed) t_listed = false;
}

}  // namespace heapgraph::CheckEntrants
