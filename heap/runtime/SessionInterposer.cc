// heap/runtime/: the interposed process-exit and signal-disposition functions of libheapgraph.so,
// which feed the session record (how the run ended): exit, quick_exit, _exit and _Exit record the
// exit status (quick_exit as an exit() call); sigaction and signal route the application's changes
// to the signals FatalSignalHandler watches through it, so its own handlers are chained rather than
// replacing heapgraph's. Everything else goes to glibc unchanged. (sysv_signal, sigset and
// bsd_signal are not interposed: a handler set through them replaces heapgraph's, and that signal
// then goes unrecorded.)
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap/runtime/ExitCaller.h"
#include "heap/runtime/Recorder.h"
#include "heap/session/FatalSignalHandler.h"
#include "heapgraph/heapgraph.h"

extern "C" int __sigaction(int signal, const struct sigaction* action, struct sigaction* old);

namespace {

using ExitFn = void (*)(int);
ExitFn real_exit = nullptr;
ExitFn real_quick_exit = nullptr;

__attribute__((constructor(102))) void ResolveExit() {
  real_exit = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "exit"));
  real_quick_exit = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "quick_exit"));
}

[[noreturn]] void ExitGroup(int status) {
  for (;;) syscall(SYS_exit_group, status);
}

}  // namespace

extern "C" {

// Built with frame pointers (libheapgraph.so): the frame address + 16 is its caller's stack
// pointer.
[[noreturn]] HEAPGRAPH_API void exit(int status) {
  heapgraph::ExitCaller::NoteCall(reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16);
  heapgraph::recorder::RecordExit(heapgraph::format::kExitCalled, status);
  if (real_exit == nullptr) ResolveExit();
  if (real_exit != nullptr) real_exit(status);
  ExitGroup(status);
}

// quick_exit runs the at_quick_exit handlers, then glibc's internal _exit (not interposable).
[[noreturn]] HEAPGRAPH_API void quick_exit(int status) noexcept {
  heapgraph::recorder::RecordExit(heapgraph::format::kExitCalled, status);
  if (real_quick_exit == nullptr) ResolveExit();
  if (real_quick_exit != nullptr) real_quick_exit(status);
  ExitGroup(status);
}

[[noreturn]] HEAPGRAPH_API void _exit(int status) {
  heapgraph::recorder::RecordExit(heapgraph::format::kExitImmediate, status);
  ExitGroup(status);
}

[[noreturn]] HEAPGRAPH_API void _Exit(int status) {
  heapgraph::recorder::RecordExit(heapgraph::format::kExitImmediate, status);
  ExitGroup(status);
}

HEAPGRAPH_API int sigaction(int signal, const struct sigaction* action,
                            struct sigaction* old_action) {
  int result = 0;
  if (heapgraph::FatalSignalHandler::Intercept(signal, action, old_action, &result)) return result;
  return __sigaction(signal, action, old_action);
}

// glibc's BSD semantics: the signal blocked in its own handler, interrupted calls restarted.
HEAPGRAPH_API sighandler_t signal(int signal, sighandler_t handler) {
  struct sigaction action = {}, old_action = {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, signal);
  action.sa_flags = SA_RESTART;
  if (sigaction(signal, &action, &old_action) != 0) return SIG_ERR;
  return old_action.sa_handler;
}

}  // extern "C"
