#include "heap/session/FatalSignalHandler.h"

#include <errno.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "heap/session/SessionFile.h"

// glibc's exported alias of sigaction: reaches the kernel even while sigaction is interposed.
extern "C" int __sigaction(int signal, const struct sigaction* action, struct sigaction* old);

namespace heapgraph {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS,  SIGILL, SIGFPE, SIGABRT, SIGTRAP,
                            SIGSYS,  SIGTERM, SIGINT, SIGHUP, SIGQUIT};
constexpr int kMaxSignal = 65;

SessionFile* g_session = nullptr;
// Invariant: managed[s] is true exactly while the kernel's action for s is Handle, and then
// chained[s] is the application's action (what it last set, or what was there before Install).
std::atomic<bool> g_managed[kMaxSignal];
struct sigaction g_chained[kMaxSignal];

bool Managed(int signal) {
  return signal > 0 && signal < kMaxSignal && g_managed[signal].load(std::memory_order_acquire);
}

// The kernel reads a handler value of SIG_DFL or SIG_IGN as that disposition whatever the flags
// say (SA_SIGINFO included); sa_handler and sa_sigaction share their storage.
bool IsDefault(const struct sigaction& action) {
  return action.sa_handler == SIG_DFL;
}
// The same action (a shell sets its handlers again around every fork): a store of what is there
// already would still copy a page that the last fork left shared with the child.
bool SameAction(const struct sigaction& a, const struct sigaction& b) {
  return a.sa_sigaction == b.sa_sigaction && a.sa_flags == b.sa_flags &&
         a.sa_restorer == b.sa_restorer && memcmp(&a.sa_mask, &b.sa_mask, sizeof(a.sa_mask)) == 0;
}

bool IsIgnored(const struct sigaction& action) {
  return action.sa_handler == SIG_IGN;
}

// Runs the application's action; false when that was SIG_DFL (restored and re-raised: the
// process dies when the handler returns).
bool Chain(int signal, siginfo_t* info, void* context) {
  struct sigaction chained = g_chained[signal];
  bool siginfo = (chained.sa_flags & SA_SIGINFO) != 0;
  if (IsDefault(chained)) {
    // The default action: restore it and re-raise. The signal is blocked in this handler, so it
    // is delivered, with the default action, when the handler returns.
    struct sigaction default_action = {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    g_managed[signal].store(false, std::memory_order_release);
    __sigaction(signal, &default_action, nullptr);
    raise(signal);
    return false;
  }
  if (IsIgnored(chained)) return true;
  if ((chained.sa_flags & SA_RESETHAND) != 0) {
    g_chained[signal].sa_handler = SIG_DFL;
    g_chained[signal].sa_flags &= ~SA_SIGINFO;
  }
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &chained.sa_mask, &saved);
  if ((chained.sa_flags & SA_NODEFER) != 0) {  // the program asked not to block its own signal
    sigset_t self;
    sigemptyset(&self);
    sigaddset(&self, signal);
    pthread_sigmask(SIG_UNBLOCK, &self, nullptr);
  }
  if (siginfo) {
    chained.sa_sigaction(signal, info, context);
  } else {
    chained.sa_handler(signal);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return true;
}

void Handle(int signal, siginfo_t* info, void* context) {
  int saved_errno = errno;
  if (g_session != nullptr) {
    g_session->RecordSignal(signal, info != nullptr ? info->si_code : 0,
                            info != nullptr ? reinterpret_cast<uintptr_t>(info->si_addr) : 0);
  }
  errno = saved_errno;
  // The application's handler returned: the program survived the signal (a JVM's null check, a
  // GC's write barrier, a handled SIGTERM), so it is forgotten; a fault that repeats is recorded
  // again on its next delivery. SIGABRT stays: abort() re-raises it with the default action
  // through glibc's internal sigaction, which this handler never sees.
  if (Chain(signal, info, context) && g_session != nullptr && signal != SIGABRT) {
    g_session->ClearSignal(signal);
  }
  errno = saved_errno;
}

}  // namespace

void FatalSignalHandler::Install(SessionFile* session) {
  g_session = session;
  for (int signal : kSignals) {
    struct sigaction old = {};
    if (__sigaction(signal, nullptr, &old) != 0) continue;
    if (IsIgnored(old)) continue;
    g_chained[signal] = old;
    struct sigaction ours = {};
    ours.sa_sigaction = &Handle;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    if (__sigaction(signal, &ours, nullptr) == 0) {
      g_managed[signal].store(true, std::memory_order_release);
    }
  }
}

bool FatalSignalHandler::Intercept(int signal, const struct sigaction* action,
                                   struct sigaction* old_action, int* result) {
  if (!Managed(signal)) return false;
  // Something replaced Handle behind the interposer's back (raw rt_sigaction, sysv_signal, ...):
  // the kernel's action is the truth again, and the call goes through unchanged.
  struct sigaction current = {};
  if (__sigaction(signal, nullptr, &current) != 0 || current.sa_sigaction != &Handle) {
    g_managed[signal].store(false, std::memory_order_release);
    return false;
  }
  // `action` and `old_action` may be the same object: read before writing.
  struct sigaction requested = {};
  if (action != nullptr) requested = *action;
  if (old_action != nullptr) *old_action = g_chained[signal];
  *result = 0;
  if (action == nullptr) return true;
  if (IsIgnored(requested)) {
    g_managed[signal].store(false, std::memory_order_release);
    *result = __sigaction(signal, &requested, nullptr);
    return true;
  }
  if (!SameAction(g_chained[signal], requested)) g_chained[signal] = requested;
  return true;
}

}  // namespace heapgraph
