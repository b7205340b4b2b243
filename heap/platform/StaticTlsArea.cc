#include "heap/platform/StaticTlsArea.h"

namespace heapgraph {

uint64_t StaticTlsArea::ThreadPointer() {
  uint64_t tp;
#if defined(__x86_64__)
  asm("mov %%fs:0, %0" : "=r"(tp));  // tcbhead_t.tcb: the TCB's own address
#elif defined(__aarch64__)
  asm("mrs %0, tpidr_el0" : "=r"(tp));
#else
#error "heap/StaticTlsArea supports x86-64 and aarch64"
#endif
  return tp;
}

StaticTlsArea StaticTlsArea::Of(const void* object, uint64_t size) {
  uint64_t address = reinterpret_cast<uint64_t>(object);
  return StaticTlsArea(static_cast<int64_t>(address - ThreadPointer()), size);
}

}  // namespace heapgraph
