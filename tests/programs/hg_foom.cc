// tests/programs: the child of the FOOM tests (tests/heap/RecorderFoomTest.cc). Usage:
//   hg_foom grow LIMIT   grows a std::map<uint64_t, LedgerEntry*> of 1000-byte entries (allocated
//                        in GrowLedger through the thin wrapper LedgerAlloc) without end (LIMIT 0:
//                        until a memory limit kills it) or up to LIMIT entries and then replaces
//                        random entries forever; "ready" after the first 1000 entries
//   hg_foom accounts     grows a std::map<uint64_t, ledger::Account*> of polymorphic 1000-byte
//                        objects (allocated in GrowAccounts) without end, 100 per millisecond at
//                        most (the memory-pressure watcher names them by their vtable before the
//                        kill); "ready" after the first 1000
//   hg_foom clean        ready, waits for stdin EOF, exit(3)
//   hg_foom crash        installs its own SIGSEGV handler (after heapgraph's), ready, waits for
//                        stdin EOF, dereferences null; the handler prints "app-handler 11",
//                        restores SIG_DFL and returns, so the fault repeats and kills the process
//   hg_foom hang         ready, waits for stdin EOF, then deadlocks on a mutex it holds
//   hg_foom term [handle] ready, then sleeps until a signal ends it; with "handle" it installs its
//                        own SIGTERM handler and prints "survived 15" after the first SIGTERM
//   hg_foom term-exit    ready, then sleeps; its own SIGTERM handler calls exit(5)
//   hg_foom quick-exit   ready, waits for stdin EOF, quick_exit(4)
//   hg_foom beat         calls heapgraph_heartbeat() (found with dlsym) a few times, ready, then
//                        keeps allocating without heartbeats: its main loop is stuck although
//                        the heap moves
//   hg_foom idle         ready, then sleeps until killed (a run killed in the background when the
//                        test sets HG_FOOM_BACKGROUND=1: it calls heapgraph_set_app_state(0))
// With HG_FOOM_COUNT=FILE, grow and accounts keep the number of entries the map holds in FILE (a
// shared mapping, so the count survives SIGKILL): the truth a sampled report is checked against.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <new>

#include "ProgramSupport.h"

namespace ledger {

struct Account {
  virtual ~Account() = default;
  char payload[992];
};
static_assert(sizeof(Account) == 1000);

}  // namespace ledger

namespace {

struct LedgerEntry {
  char payload[1000];
};

std::map<uint64_t, LedgerEntry*> g_ledger;
std::map<uint64_t, ledger::Account*> g_accounts;

// The entry count in HG_FOOM_COUNT's file, or a dummy.
volatile uint64_t* CountSlot() {
  static volatile uint64_t* slot = [] {
    static uint64_t dummy;
    const char* path = getenv("HG_FOOM_COUNT");
    if (path == nullptr) return static_cast<volatile uint64_t*>(&dummy);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) abort();
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) abort();
    close(fd);
    return static_cast<volatile uint64_t*>(p);
  }();
  return slot;
}

// A thin allocation wrapper (the report's Caller1 must skip it: ThinWrapperDetector).
extern "C" __attribute__((noinline)) void* LedgerAlloc(size_t size) {
  return operator new(size);
}

extern "C" __attribute__((noinline)) void GrowLedger(uint64_t key) {
  auto* entry = new (LedgerAlloc(sizeof(LedgerEntry))) LedgerEntry;
  memset(entry->payload, static_cast<int>(key), sizeof(entry->payload));
  LedgerEntry*& slot = g_ledger[key];
  delete slot;
  slot = entry;
  *CountSlot() = g_ledger.size();
}

extern "C" __attribute__((noinline)) void GrowAccounts(uint64_t key) {
  auto* account = new ledger::Account;
  memset(account->payload, static_cast<int>(key), sizeof(account->payload));
  g_accounts[key] = account;
  *CountSlot() = g_accounts.size();
}

[[noreturn]] void Accounts() {
  uint64_t key = 0;
  for (; key < 1000; ++key) GrowAccounts(key);
  hgprog::Ready();
  for (;; ++key) {
    GrowAccounts(key);
    if (key % 100 == 0) usleep(1000);
  }
}

[[noreturn]] void Grow(uint64_t limit) {
  uint64_t key = 0;
  for (; key < 1000; ++key) GrowLedger(key);
  hgprog::Ready();
  hgprog::Random random(42);
  for (;;) {
    if (limit == 0 || key < limit) {
      GrowLedger(key++);
    } else {
      GrowLedger(random.Next() % limit);
    }
  }
}

void AppSegvHandler(int signal) {
  char line[] = "app-handler 11\n";
  (void)!write(1, line, sizeof(line) - 1);
  struct sigaction restore = {};
  restore.sa_handler = SIG_DFL;
  sigaction(signal, &restore, nullptr);
}

[[noreturn]] void Crash() {
  struct sigaction action = {};
  action.sa_handler = &AppSegvHandler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  volatile int* null = nullptr;
  *null = 1;
  abort();
}

[[noreturn]] void Hang() {
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&mutex);
  pthread_mutex_lock(&mutex);  // deadlocks: a default mutex is not recursive
  abort();
}

volatile sig_atomic_t g_terminated = 0;

void AppTermHandler(int) {
  g_terminated = 1;
}

[[noreturn]] void Term(bool handle) {
  if (handle) signal(SIGTERM, &AppTermHandler);
  hgprog::Ready();
  while (g_terminated == 0) usleep(1000);  // not pause(): the signal may come before it
  printf("survived 15\n");
  fflush(stdout);
  for (;;) pause();
}

void AppTermExitHandler(int) {
  exit(5);  // not async-signal-safe, but what many programs do
}

[[noreturn]] void TermExit() {
  signal(SIGTERM, &AppTermExitHandler);
  hgprog::Ready();
  for (;;) pause();
}

// SIG_IGN given with SA_SIGINFO is still "ignore" to the kernel; heapgraph must not call it.
void IgnoreWithSiginfo() {
  struct sigaction action = {};
  action.sa_flags = SA_SIGINFO;
  action.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &action, nullptr);
  raise(SIGTERM);
  printf("survived 15\n");
}

void FirstHandler(int) {
  (void)!write(1, "handler 1\n", 10);
}
void SecondHandler(int) {
  (void)!write(1, "handler 2\n", 10);
}

// sigaction(s, &a, &a): the new action is read before the old one is written back.
void SameActionObject() {
  struct sigaction action = {};
  action.sa_handler = &FirstHandler;
  sigaction(SIGINT, &action, nullptr);
  action.sa_handler = &SecondHandler;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"  // the point of the test; the kernel allows it
  sigaction(SIGINT, &action, &action);
#pragma GCC diagnostic pop
  raise(SIGINT);
}

// A program that blocks SIGTERM everywhere and reads it from a signalfd: heapgraph's threads must
// not take it instead (they block every signal).
void SignalFd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  int fd = signalfd(-1, &set, 0);
  hgprog::Ready();
  signalfd_siginfo info = {};
  if (fd >= 0 && read(fd, &info, sizeof(info)) == sizeof(info)) {
    printf("signalfd %u\n", info.ssi_signo);
  }
}

[[noreturn]] void BeatThenSpin() {
  using Heartbeat = void (*)();
  auto beat = reinterpret_cast<Heartbeat>(dlsym(RTLD_DEFAULT, "heapgraph_heartbeat"));
  for (int i = 0; i < 3 && beat != nullptr; ++i) beat();
  hgprog::Ready();
  for (uint64_t key = 0;; ++key) {
    GrowLedger(key % 1000);
    usleep(100);
  }
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "grow") == 0) Grow(argc > 2 ? strtoull(argv[2], nullptr, 10) : 0);
  if (strcmp(mode, "accounts") == 0) Accounts();
  if (strcmp(mode, "crash") == 0) Crash();
  if (strcmp(mode, "hang") == 0) Hang();
  if (strcmp(mode, "beat") == 0) BeatThenSpin();
  if (strcmp(mode, "term") == 0) Term(argc > 2 && strcmp(argv[2], "handle") == 0);
  if (strcmp(mode, "term-exit") == 0) TermExit();
  if (strcmp(mode, "quick-exit") == 0) {
    hgprog::Ready();
    hgprog::WaitForStdinEof();
    quick_exit(4);
  }
  if (strcmp(mode, "ignore-siginfo") == 0) return IgnoreWithSiginfo(), 0;
  if (strcmp(mode, "same-action") == 0) return SameActionObject(), 0;
  if (strcmp(mode, "signalfd") == 0) return SignalFd(), 0;
  if (strcmp(mode, "clean") == 0) {
    hgprog::Ready();
    hgprog::WaitForStdinEof();
    exit(3);
  }
  if (strcmp(mode, "idle") == 0) {
    const char* background = getenv("HG_FOOM_BACKGROUND");
    if (background != nullptr && background[0] == '1') {
      using SetState = void (*)(int);
      if (auto set = reinterpret_cast<SetState>(dlsym(RTLD_DEFAULT, "heapgraph_set_app_state"))) {
        set(0);
      }
    }
    hgprog::Ready();
    for (;;) pause();
  }
  fprintf(stderr,
          "usage: hg_foom grow LIMIT | accounts | clean | crash | hang | term [handle] | term-exit "
          "| quick-exit | "
          "beat | "
          "idle | ignore-siginfo | same-action | signalfd\n");
  return 2;
}
