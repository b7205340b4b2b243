// heap/runtime/: LeakSanitizer's interface (compiler-rt's include/sanitizer/lsan_interface.h),
// exported by libheapgraph.so so that LSan-annotated code builds against it and behaves the same
// under LD_PRELOAD or linked (docs/lsan-compatibility.md): ignored objects and allocations under
// __lsan_disable are flagged in the live-allocation tree (never reported, scanned as roots), root
// regions go to heap/runtime/RootRegions, the checks to heap/runtime/LeakCheckTrigger. No malloc;
// a call LeakSanitizer would die on (an unmatched __lsan_enable, an unknown root region) is one
// line on stderr here, and the program goes on.
#include <cstddef>
#include <cstdint>

#include "heap/platform/WarningLine.h"
#include "heap/runtime/LeakCheckTrigger.h"
#include "heap/runtime/Recorder.h"
#include "heap/runtime/RootRegions.h"
#include "heapgraph/heapgraph.h"

using namespace heapgraph;

extern "C" {

HEAPGRAPH_API void __lsan_ignore_object(const void* p) {
  recorder::IgnoreBlock(p);  // like LeakSanitizer, an address of no block is silently ignored
}

HEAPGRAPH_API void __lsan_disable(void) {
  recorder::ChangeDisabledDepth(+1);
}

HEAPGRAPH_API void __lsan_enable(void) {
  if (!recorder::ChangeDisabledDepth(-1)) {
    WarningLine::Print("unmatched call to __lsan_enable()", nullptr, "; ignored");
  }
}

HEAPGRAPH_API void __lsan_register_root_region(const void* p, size_t size) {
  RootRegions::Register(p, size);
}

HEAPGRAPH_API void __lsan_unregister_root_region(const void* p, size_t size) {
  RootRegions::Unregister(p, size);
}

HEAPGRAPH_API __attribute__((noinline)) void __lsan_do_leak_check(void) {
  LeakCheckTrigger::CheckOnce(HEAPGRAPH_CALLER_SP());
}

HEAPGRAPH_API __attribute__((noinline)) int __lsan_do_recoverable_leak_check(void) {
  return LeakCheckTrigger::CheckRecoverable(HEAPGRAPH_CALLER_SP());
}

}  // extern "C"
