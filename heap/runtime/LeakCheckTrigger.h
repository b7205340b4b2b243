// heap/runtime/: starts leak checks from inside the recorded process: at exit (after static
// destructors) and on a signal. The check itself lives in libheapgraph_scan.so next to
// libheapgraph.so; it is loaded with dlopen only when a check runs, so the recorder keeps its
// dependencies minimal and heap/ includes nothing of the layers above it (it knows only the C entry
// point's name).
#pragma once

#include <cstdint>

#include "heap/config/Config.h"

// In a noinline entry point of the program (an exported function), the stack pointer of its
// caller at the call: the program's frames start there, the entry's own lie below.
#define HEAPGRAPH_CALLER_SP() (reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16)

namespace heapgraph {

namespace LeakCheckTrigger {

// From the library constructor: registers the at-exit check (first, so it runs last) and the
// signal's handler as configured. One line on stderr for anything that cannot be set up. The
// at-exit check ends the process with `exitcode` when it finds leaks, and with `error_exitcode`
// (one line on stderr says why) when it could not run: sampled recording, plugin not loadable, scan
// failed. Reports and the at-exit verdict go to the recording directory of the moment (a forked
// child's own once it has one), `recording_dir` when there is none. `stop_tool_threads` (may be
// null) runs twice once the at-exit check is known to run: with false first (the recorder asks
// its tool threads to end; they do while the check finds where exit() was called), with true
// right before the check (it joins them).
void Install(const Config& config, const char* recording_dir,
             void (*stop_tool_threads)(bool wait) = nullptr);

// The signal's thread waits for a signal that most programs never get: it is started only once
// one came (the session thread watches SignalFd() and calls StartSignalWatcher, which reads the
// byte). SignalFd: the descriptor that becomes readable on the signal, -1 when Install set none up.
int SignalFd();
// Starts the thread that runs one check per signal (nothing when Install set up no signal); one
// line on stderr if it cannot be started.
void StartSignalWatcher();

// LeakSanitizer's __lsan_do_leak_check: the at-exit check, now, at most once in the process (a
// second call, and the at-exit check afterwards, do nothing); ends the process with `exitcode`
// when it finds leaks (unless exitcode is 0: then it returns) and with `error_exitcode` when it
// could not run. The calling thread's stack
// is scanned from `program_stack_pointer`. Nothing when detect_leaks=0, when the program's
// __lsan_is_turned_off() returns nonzero, or when the recorder is not running.
void CheckOnce(uint64_t program_stack_pointer);
// LeakSanitizer's __lsan_do_recoverable_leak_check: one check with the at-exit check's reports,
// repeatable; 1 if it found leaks or could not run (one line on stderr says why), else 0 (also
// when no check runs, as above).
int CheckRecoverable(uint64_t program_stack_pointer);

}  // namespace LeakCheckTrigger

}  // namespace heapgraph
