// heap/runtime/: the hooks a LeakSanitizer-annotated program may define (lsan_interface.h):
// __lsan_is_turned_off and __lsan_default_options.
// libheapgraph.so refers to them weakly, so the loader binds them at start (no dlsym, nothing
// allocated, safe inside the first hook) to the program's definitions when the program exports
// them: linked against libheapgraph.so, or built with -rdynamic or
// -Wl,--export-dynamic-symbol=__lsan_*. An executable that exports nothing keeps them unbound
// under LD_PRELOAD (docs/lsan-compatibility.md). (__lsan_default_suppressions is read by the
// check's side, libheapgraph_scan.so: check/DefaultSuppressions.)
#pragma once

extern "C" {
__attribute__((weak, visibility("default"))) int __lsan_is_turned_off(void);
__attribute__((weak, visibility("default"))) const char* __lsan_default_options(void);
}

namespace heapgraph::LsanHooks {

// The program's __lsan_is_turned_off() returned nonzero: no at-exit or __lsan_do_* check.
inline bool TurnedOff() {
  return __lsan_is_turned_off != nullptr && __lsan_is_turned_off() != 0;
}

// The program's __lsan_default_options(), or null.
inline const char* DefaultOptions() {
  return __lsan_default_options != nullptr ? __lsan_default_options() : nullptr;
}

}  // namespace heapgraph::LsanHooks
