// heap/session/: records the fatal or terminating signal that ends a process in its session, then
// hands the signal to the application's own handler (libsigchain-style chaining). Installed for
// SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGTERM, SIGINT, SIGHUP and SIGQUIT,
// except where the disposition is SIG_IGN. The interposed sigaction()/signal()
// (SessionInterposer.cc) route the application's later changes for those signals here, so its
// handler is chained, not lost, and its view of the old action is what it set. A chained SIG_DFL
// restores the default and re-raises (the process still dies of the signal, with its core dump); an
// application that asks for SIG_IGN gets the kernel's SIG_IGN back and heapgraph stops watching
// that signal. A signal whose application handler returns was survived and is forgotten (except
// SIGABRT). Async-signal-safe; no allocation.
#pragma once

#include <signal.h>

namespace heapgraph {

class SessionFile;

namespace FatalSignalHandler {

void Install(SessionFile* session);
// The interposed sigaction: true (with *result the return value) when `signal` is managed
// here; false means "call the real sigaction".
bool Intercept(int signal, const struct sigaction* action, struct sigaction* old_action,
               int* result);

}  // namespace FatalSignalHandler

}  // namespace heapgraph
